import type {
  Block,
  GenerateRequest,
  GenerateResult,
  Message,
  StopReason,
  ToolSpec,
} from '../wire/spec.ts';
import { textOf } from '../wire/spec.ts';
import { answerNotice } from '../calls/answer-notice.ts';
import {
  CONTEXT_POLICY,
  createContextPolicy,
  type ContextPolicy,
  type ContextPolicySettings,
} from './context-policy.ts';
import { countdownNote, isUnclearEnding, NUDGE } from './turn-notices.ts';
import type { WorkerTool, WorkerToolContext } from './worker-tools/types.ts';

/** Tools the loop itself answers: progress notes and questions to the supervisor. */
export const LOOP_TOOLS: readonly ToolSpec[] = [
  {
    name: 'report_progress',
    description:
      'Tell the supervisor, in one line, what you are doing now. Cheap; use it at each milestone.',
    inputSchema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
  },
  {
    name: 'ask_supervisor',
    description:
      'Ask the supervisor a question when you are blocked and cannot decide safely yourself. You wait for the ' +
      'answer; if none comes in time, proceed on your best conservative judgement.',
    inputSchema: {
      type: 'object',
      properties: { question: { type: 'string' } },
      required: ['question'],
    },
  },
];

export interface LoopHooks {
  onStep(step: number, activity: string): void;
  askSupervisor(question: string): Promise<string>;
  /** Steering messages that arrived since the last step. */
  takeSteering(): string[];
  onFilesWritten(paths: readonly string[]): void;
  /**
   * Called when the worker gives its final answer: a message (e.g. failing test output) and
   * extra turns make the run go on in the same conversation; undefined lets it end.
   */
  continueAfterAnswer?(): Promise<{ message: string; extraTurns: number } | undefined>;
}

export interface LoopOptions {
  system: string;
  task: string;
  tools: readonly WorkerTool[];
  maxTurns: number;
  maxOutputTokens: number;
  callModel(request: GenerateRequest): Promise<GenerateResult>;
  toolContext: WorkerToolContext;
  hooks: LoopHooks;
  /** Eviction and repeat cache (default CONTEXT_POLICY); NAIVE_CONTEXT keeps the full history. */
  contextPolicy?: ContextPolicySettings;
  /** Added to the error a call of a tool not offered gets (a read-only run says why it has none). */
  unknownToolNote?: string;
}

export interface LoopOutcome {
  /** The final answer; first line a notice when it was cut off, filtered or refused. */
  summary: string;
  turns: number;
  /** `unclear`: after the one nudge, another turn ended without a tool call or a clear answer. */
  stoppedBy: 'answer' | 'max_turns' | 'unclear';
}

/** One run's state beside its messages. */
interface Run {
  options: LoopOptions;
  tools: ReadonlyMap<string, WorkerTool>;
  policy: ContextPolicy;
  /** The turn budget, raised when the run goes on after an answer. */
  budget: number;
  isNudged: boolean;
}

/**
 * A question is shown whole where it waits for an answer (task_status cuts it to a line, the
 * native task's form does not): a worker cannot flood the supervisor with one.
 */
const MAX_QUESTION_CHARS = 2_000;
const EMPTY_REPLY: Block = { type: 'text', text: '(empty reply)' };
/** A worker cannot raise its own output limit: it can only do less per answer. */
const CUT_OFF_ADVICE = 'the answer is incomplete; narrow the task or split it';

type ToolUseBlock = Extract<Block, { type: 'tool_use' }>;
type ToolResultBlock = Extract<Block, { type: 'tool_result' }>;

/**
 * The builtin agent: call the model, run the tools it asks for, feed the results back, until
 * it answers without a tool call (that answer is the summary) or the turn budget runs out.
 * Along the way: old tool results are evicted and repeated reads answered from the last result
 * (context-policy.ts), a countdown warns near the budget, and one turn that ends without a tool
 * call and without a clear answer gets a nudge instead of ending the run (turn-notices.ts).
 */
export async function runAgentLoop(options: LoopOptions): Promise<LoopOutcome> {
  const run: Run = {
    options,
    tools: new Map(options.tools.map((tool) => [tool.name, tool])),
    policy: createContextPolicy(options.contextPolicy ?? CONTEXT_POLICY),
    budget: options.maxTurns,
    isNudged: false,
  };
  const specs = toolSpecs(options.tools);
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: options.task }] }];
  let lastText = '';
  for (let turn = 1; turn <= run.budget; turn += 1) {
    options.hooks.onStep(turn, 'thinking');
    const result = await options.callModel({
      system: options.system,
      messages,
      tools: specs,
      maxOutputTokens: options.maxOutputTokens,
    });
    // An empty reply is kept as a placeholder: Anthropic refuses an empty assistant message.
    const content: Block[] = result.content.length > 0 ? result.content : [EMPTY_REPLY];
    messages.push({ role: 'assistant', content });
    const text = textOf(result.content).trim();
    lastText = text || lastText;
    const uses = result.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
    const replies: Block[] = [];
    for (const use of uses) replies.push(await runTool(use, run, turn));
    // A message from the supervisor that came in while the model was answering still counts.
    const notes = options.hooks.takeSteering().map(steeringNote);
    // The supervisor may have changed files before steering.
    if (notes.length > 0) run.policy.forgetReads();
    if (uses.length === 0 && notes.length === 0) {
      const next = await afterToolFreeTurn(run, turn, text, result.stopReason);
      if ('stop' in next) {
        const notice = answerNotice(result, options.maxOutputTokens, CUT_OFF_ADVICE)?.line;
        const summary = summaryOf(lastText, next.stop, notice);
        return { summary, turns: turn, stoppedBy: next.stop };
      }
      notes.push(next.note);
    }
    const countdown = countdownNote(run.budget - turn);
    if (countdown) notes.push(countdown);
    if (notes.length > 0) replies.push({ type: 'text', text: notes.join('\n\n') });
    messages.push({ role: 'user', content: replies });
    run.policy.evict(turn);
  }
  return { summary: lastText, turns: run.budget, stoppedBy: 'max_turns' };
}

/**
 * After a turn with no tool call and no steering: the end of the run, or the note it goes on
 * with — the nudge, or what `continueAfterAnswer` sends back after a final answer.
 */
async function afterToolFreeTurn(
  run: Run,
  turn: number,
  text: string,
  stopReason: StopReason,
): Promise<{ stop: LoopOutcome['stoppedBy'] } | { note: string }> {
  const stop = stopWithoutTools(run, turn, text, stopReason);
  if (stop === undefined) return { note: NUDGE };
  // Test output sent back to a model that refused would only be refused again.
  if (stop !== 'answer' || isWithheld(stopReason)) return { stop };
  const next = await run.options.hooks.continueAfterAnswer?.();
  if (!next) return { stop };
  // Whatever ran meanwhile (a test command) may have changed files.
  run.policy.forgetReads();
  run.budget += next.extraTurns;
  return { note: next.message };
}

/** A turn without a tool call ends the run, unless it is the first unclear one: that one is nudged. */
function stopWithoutTools(
  run: Run,
  turn: number,
  text: string,
  stopReason: StopReason,
): LoopOutcome['stoppedBy'] | undefined {
  if (turn >= run.budget || isWithheld(stopReason) || !isUnclearEnding(text, stopReason))
    return 'answer';
  if (run.isNudged) return 'unclear';
  run.isNudged = true;
  run.options.hooks.onStep(turn, 'nudged: no tool call and no clear final answer');
  return undefined;
}

/** A refusal or a filtered answer ends the run: a nudge would not change the model's mind. */
function isWithheld(stopReason: StopReason): boolean {
  return stopReason === 'refusal' || stopReason === 'content_filter';
}

/** A cut-off final answer must not pass as a clean one: its notice goes first. */
function summaryOf(
  lastText: string,
  stop: LoopOutcome['stoppedBy'],
  notice: string | undefined,
): string {
  const note =
    stop === 'unclear'
      ? '(The worker stopped without a clear final answer, even after a reminder.)'
      : '';
  return [notice, lastText, note].filter(Boolean).join('\n\n');
}

function toolSpecs(tools: readonly WorkerTool[]): ToolSpec[] {
  return [
    ...tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    })),
    ...LOOP_TOOLS,
  ];
}

async function runTool(use: ToolUseBlock, run: Run, turn: number): Promise<ToolResultBlock> {
  const { options, policy } = run;
  const input = (use.input ?? {}) as Record<string, unknown>;
  const reply = (content: string, isError = false): ToolResultBlock => ({
    type: 'tool_result',
    toolUseId: use.id,
    content,
    ...(isError ? { isError } : {}),
  });
  if (use.name === 'report_progress') {
    options.hooks.onStep(turn, textArgument(input.note).slice(0, 200));
    return reply('Noted.');
  }
  if (use.name === 'ask_supervisor') {
    const answer = await options.hooks.askSupervisor(
      textArgument(input.question).slice(0, MAX_QUESTION_CHARS),
    );
    // The supervisor may have changed files while the worker waited.
    policy.forgetReads();
    return reply(answer);
  }
  const tool = run.tools.get(use.name);
  if (!tool) {
    const available = [...run.tools.keys(), 'report_progress', 'ask_supervisor'].join(', ');
    const note = options.unknownToolNote ? ` ${options.unknownToolNote}` : '';
    return reply(`Unknown tool ${use.name}. Available: ${available}.${note}`, true);
  }
  const label = describeCall(use.name, input);
  const repeated = tool.isReadOnly ? policy.repeatOf(use.name, input) : undefined;
  if (!tool.isReadOnly) policy.forgetReads();
  options.hooks.onStep(turn, repeated === undefined ? label : `${label} (repeat)`);
  const result =
    repeated === undefined ? await tool.run(input, options.toolContext) : { content: repeated };
  if (result.filesWritten?.length) options.hooks.onFilesWritten(result.filesWritten);
  const block = reply(result.content, result.isError === true);
  const isRepeat = repeated !== undefined;
  policy.track(block, {
    name: use.name,
    input,
    label,
    isReadOnly: tool.isReadOnly,
    turn,
    isRepeat,
  });
  return block;
}

function describeCall(name: string, input: Record<string, unknown>): string {
  const target = textArgument(input.path ?? input.pattern ?? input.command);
  return `${name} ${target}`.slice(0, 120).trim();
}

/** A model-supplied argument as text, whatever JSON type it came as. */
function textArgument(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function steeringNote(note: string): string {
  return `Message from the supervisor (takes priority): ${note}`;
}
