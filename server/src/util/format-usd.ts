/** Cents, plus up to two more digits so that small per-call amounts do not read as $0.00. */
export function formatUsd(amount: number): string {
  const digits = { minimumFractionDigits: 2, maximumFractionDigits: 4 };
  return `$${amount.toLocaleString('en-US', { ...digits, useGrouping: false })}`;
}
