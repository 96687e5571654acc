/**
 * The worst case of one attempt of a model call, and fitting a task's call to what is left of
 * its cap. The reservation in `budget.ts` counts exactly this.
 */
import { formatUsd as usd } from '../util/format-usd.ts';
import { UserError } from '../util/user-error.ts';
import type { Price, Rates } from './pricing.ts';

/** Sums of separately rounded amounts must not refuse a call that lands exactly on the cap. */
const TOLERANCE_USD = 1e-9;

/** A task's next call cannot fit in what is left of its cap; the task should stop there. */
export class TaskBudgetReached extends UserError {
  constructor(
    readonly spentUsd: number,
    readonly capUsd: number,
    /** What the cap is, when it is not the task's whole budget. */
    note?: string,
  ) {
    super(
      `budget reached: the task spent ${usd(spentUsd)} of its ${usd(capUsd)} cap, and its next model call ` +
        `could not fit in what is left.${note ? ` ${note}` : ''} Raise budget_usd (or "budget": {"perTaskUsd": …}) to let it go further.`,
    );
  }
}

/** A task call allowed fewer output tokens than this is not worth making. */
const MIN_OUTPUT_TOKENS = 256;

/**
 * The output allowance a task's call can afford with what is left of its cap (worst case, as
 * the reservation counts it): the request as asked when it fits, a smaller `maxOutputTokens`
 * when that still leaves a useful answer, else {@link TaskBudgetReached}.
 */
export function fitToTaskBudget<T extends { maxOutputTokens: number }>(
  request: T,
  price: Price,
  inputBytes: number,
  budget: { capUsd: number; spentUsd: number; note?: string },
): T {
  const leftUsd = budget.capUsd - budget.spentUsd + TOLERANCE_USD;
  if (worstCaseCost(price, inputBytes, request.maxOutputTokens) <= leftUsd) return request;
  const inputUsd = worstCaseCost(price, inputBytes, 0);
  const perOutputToken = worstCaseRates(price, inputBytes).outputPerMTok / 1_000_000;
  const affordable = perOutputToken > 0 ? Math.floor((leftUsd - inputUsd) / perOutputToken) : 0;
  if (affordable < MIN_OUTPUT_TOKENS)
    throw new TaskBudgetReached(budget.spentUsd, budget.capUsd, budget.note);
  return { ...request, maxOutputTokens: Math.min(request.maxOutputTokens, affordable) };
}

/**
 * Worst case of one attempt: one input token per byte of the request as sent (no tokenizer is
 * bundled; a byte-level BPE token covers at least one byte, so none counts more), every one of
 * them billed at the dearest input rate (for Anthropic, all of it written to the 1-hour cache),
 * plus every output token allowed, at the rates of the highest long-context tier that many
 * input tokens could reach.
 */
export function worstCaseCost(price: Price, inputBytes: number, maxOutputTokens: number): number {
  const rates = worstCaseRates(price, inputBytes);
  return (inputBytes * rates.inputPerMTok + maxOutputTokens * rates.outputPerMTok) / 1_000_000;
}

/** The dearest input-side and output rates of the base price and every tier `inputTokens` could reach. */
function worstCaseRates(
  price: Price,
  inputTokens: number,
): { inputPerMTok: number; outputPerMTok: number } {
  const reachable: Rates[] = [
    price,
    ...(price.tiers ?? []).filter((tier) => inputTokens > tier.inputTokensAbove),
  ];
  const inputSide = (rates: Rates) => {
    const write = rates.cacheWritePerMTok ?? rates.inputPerMTok;
    const write1h = rates.cacheWrite1hPerMTok ?? write;
    return Math.max(rates.inputPerMTok, rates.cachedInputPerMTok ?? 0, write, write1h);
  };
  return {
    inputPerMTok: Math.max(...reachable.map(inputSide)),
    outputPerMTok: Math.max(...reachable.map((rates) => rates.outputPerMTok)),
  };
}
