import type {
  Block,
  GenerateRequest,
  GenerateResult,
  Message,
  ToolSpec,
} from '../providers/spec.ts';
import { textOf } from '../providers/spec.ts';
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
}

export interface LoopOutcome {
  summary: string;
  turns: number;
  stoppedBy: 'answer' | 'max_turns';
}

/**
 * The builtin agent: call the model, run the tools it asks for, feed the results back, until
 * it answers without a tool call (that answer is the summary) or the turn budget runs out.
 */
export async function runAgentLoop(options: LoopOptions): Promise<LoopOutcome> {
  const tools = new Map(options.tools.map((tool) => [tool.name, tool]));
  const specs: ToolSpec[] = [
    ...options.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    })),
    ...LOOP_TOOLS,
  ];
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: options.task }] }];
  let lastText = '';
  for (let turn = 1; turn <= options.maxTurns; turn += 1) {
    options.hooks.onStep(turn, 'thinking');
    const result = await options.callModel({
      system: options.system,
      messages,
      tools: specs,
      maxOutputTokens: options.maxOutputTokens,
    });
    messages.push({ role: 'assistant', content: result.content });
    lastText = textOf(result.content).trim() || lastText;
    const uses = result.content.filter((block) => block.type === 'tool_use');
    if (uses.length === 0) {
      // A message from the supervisor that came in while the model was answering still counts.
      const late = options.hooks.takeSteering();
      if (late.length === 0) return { summary: lastText, turns: turn, stoppedBy: 'answer' };
      messages.push({ role: 'user', content: late.map((note) => steeringBlock(note)) });
      continue;
    }
    const replies: Block[] = [];
    for (const use of uses) replies.push(await runTool(use, tools, options, turn));
    for (const note of options.hooks.takeSteering()) replies.push(steeringBlock(note));
    messages.push({ role: 'user', content: replies });
  }
  return { summary: lastText, turns: options.maxTurns, stoppedBy: 'max_turns' };
}

async function runTool(
  use: Extract<Block, { type: 'tool_use' }>,
  tools: ReadonlyMap<string, WorkerTool>,
  options: LoopOptions,
  turn: number,
): Promise<Block> {
  const input = (use.input ?? {}) as Record<string, unknown>;
  const reply = (content: string, isError = false): Block => ({
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
    return reply(await options.hooks.askSupervisor(textArgument(input.question)));
  }
  const tool = tools.get(use.name);
  if (!tool)
    return reply(
      `Unknown tool ${use.name}. Available: ${[...tools.keys(), 'report_progress', 'ask_supervisor'].join(', ')}.`,
      true,
    );
  options.hooks.onStep(turn, describeCall(use.name, input));
  const result = await tool.run(input, options.toolContext);
  if (result.filesWritten?.length) options.hooks.onFilesWritten(result.filesWritten);
  return reply(result.content, result.isError === true);
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

function steeringBlock(note: string): Block {
  return { type: 'text', text: `Message from the supervisor (takes priority): ${note}` };
}
