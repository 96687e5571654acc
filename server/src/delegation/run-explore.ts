import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { runAgentLoop } from '../agent/agent-loop.ts';
import { agentRootsFor, requireAgent, type AgentDefinition } from '../agent/agents.ts';
import { READ_ONLY_TOOLS, type WorkerTool } from '../agent/worker-tools/index.ts';
import { callModel } from '../calls/call-model.ts';
import { TaskBudgetReached } from '../calls/worst-case.ts';
import { loadConfig } from '../profiles/load-config.ts';
import { profileForCall } from '../calls/choose-profile.ts';
import { isWorkerFailure, noteOutcome, projectKey } from '../calls/outcomes.ts';
import { taskKind } from '../calls/task-kind.ts';
import type { AppContext } from '../profiles/app-context.ts';
import type { GenerateRequest, GenerateResult } from '../wire/spec.ts';
import { UserError } from '../util/user-error.ts';
import { checkReferences, referencesLine } from './check-references.ts';
import { exploreUsageLine, type ExploreTally } from './explore-usage.ts';
import { formatUsd } from '../util/format-usd.ts';

export interface ExploreInput {
  question: string;
  /** An agent definition (3-tier lookup) whose prompt and read-only tools the worker takes. */
  agent?: string;
  profile?: string;
  maxTurns?: number;
  /** Who asked: the `explore` tool, or a Claude Code subagent call re-homed to a worker. */
  kind?: 'explore' | 'subagent';
}

/** Turns an exploration takes by default, and at most. */
export const EXPLORE_TURNS = { default: 25, max: 60 };
/** How long one may run before it answers with what it has. */
const EXPLORE_TIMEOUT_MS = 10 * 60_000;

const SYSTEM_PROMPT = [
  'You are a read-only code explorer. A coding assistant asked you a question about the project',
  'in your working directory. Find the answer with your tools — list_files (globs), grep and',
  'read_file — reading only what you need. You cannot write, edit or run anything. Answer',
  'concisely, and back every claim with a `path:line` or `path:first-last` reference relative to',
  'the project root, as you read it: each reference is checked against the files. If the files do',
  'not hold the answer, say so plainly instead of guessing.',
].join(' ');

const READ_ONLY_NOTE =
  'This exploration is read-only: nothing can be written, edited or run. Answer from what you can read.';

/**
 * A read-only agentic question: the builtin loop in the project directory with the tools that
 * only read (list, glob, grep, read — in-process, confined to the project, never `.git`),
 * bounded by turns, time and the per-task budget. Returns the answer with its `path:line`
 * references checked (the ones that point at nothing marked) and one usage line.
 */
export async function runExplore(
  input: ExploreInput,
  context: AppContext,
  signal?: AbortSignal,
  onWaiting?: (what: string | undefined) => void,
): Promise<string> {
  const config = loadConfig(context.dataHome, context.projectDir, context.env);
  const agent = input.agent ? exploreAgent(input.agent, context) : undefined;
  const kind = taskKind(input.question, input.agent);
  const { profile, route } = await profileForCall(
    input.profile ?? agent?.profile,
    { work: 'explore', kind },
    context,
    config,
  );
  const root = realpathSync(context.projectDir);
  const maxTurns = Math.min(
    Math.max(1, input.maxTurns ?? agent?.maxTurns ?? EXPLORE_TURNS.default),
    EXPLORE_TURNS.max,
  );
  const tally: ExploreTally = { ...newTally(), profile, kind: input.kind ?? 'explore' };
  const stopper = new AbortController();
  const timer = setTimeout(() => stopper.abort(new Error('time limit')), EXPLORE_TIMEOUT_MS);
  const onAbort = () => stopper.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const capUsd = config.budget.perTaskUsd;
  let answer: string;
  let stopNote: string | undefined;
  try {
    const outcome = await runAgentLoop({
      system: agent ? `${SYSTEM_PROMPT}\n\n${agent.body}` : SYSTEM_PROMPT,
      task: input.question,
      tools: countingTools(toolsFor(agent), tally),
      maxTurns,
      maxOutputTokens: profile.maxOutputTokens ?? 8_192,
      callModel: (request) =>
        exploreCall(request, tally, context, { signal: stopper.signal, onWaiting }, capUsd),
      toolContext: { root, env: {}, signal: stopper.signal },
      hooks: {
        onStep: () => undefined,
        askSupervisor: () => Promise.resolve(NO_QUESTIONS),
        takeSteering: () => [],
        onFilesWritten: () => undefined,
      },
      unknownToolNote: READ_ONLY_NOTE,
    });
    answer = outcome.summary;
    tally.turns = outcome.turns;
    if (outcome.stoppedBy === 'max_turns') stopNote = `stopped at its ${maxTurns}-turn limit`;
  } catch (error) {
    if (!(error instanceof TaskBudgetReached) && !stopper.signal.aborted) {
      if (isWorkerFailure(error)) await noteExplore(context, tally, kind, false, 'error');
      throw error;
    }
    if (signal?.aborted) throw error;
    answer = tally.lastText;
    tally.turns = tally.calls;
    stopNote =
      error instanceof TaskBudgetReached
        ? `stopped at the per-task budget of ${formatUsd(error.capUsd)}`
        : `stopped at its ${EXPLORE_TIMEOUT_MS / 60_000}-minute limit`;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  const text = await formatExplore(answer, root, tally, stopNote, kind, context);
  return route ? `${text}\n${route.reason}` : text;
}

/** The exploration's outcome: whole when it answered in time with no reference to nothing. */
function noteExplore(
  context: AppContext,
  tally: ExploreTally,
  kind: string,
  passed: boolean,
  by: string,
  cutOff?: boolean,
): Promise<void> {
  return noteOutcome(context.dataHome, {
    ts: new Date().toISOString(),
    work: 'explore',
    project: projectKey(context.projectDir),
    profile: tally.profile.name,
    kind,
    passed,
    by,
    costUsd: tally.costUsd,
    ms: Date.now() - tally.started,
    ...(cutOff ? { cutOff } : {}),
  });
}

const NO_QUESTIONS =
  'No one answers questions during an exploration: decide on your best reading of the files, and say what you assumed.';

function exploreAgent(name: string, context: AppContext): AgentDefinition {
  return requireAgent(name, agentRootsFor(context.projectDir, context.env, context.pluginRoot));
}

/** The read-only tools, narrowed to those an agent definition names (if it names any). */
function toolsFor(agent: AgentDefinition | undefined): WorkerTool[] {
  const allowed = agent?.tools;
  const tools = READ_ONLY_TOOLS.filter((tool) => !allowed || allowed.includes(tool.name));
  if (tools.length === 0) {
    throw new UserError(
      `Agent "${agent?.name}" (${agent?.path}) allows none of the read-only tools (read_file, list_files, grep); an exploration cannot run it. Use task_start for an agent that writes.`,
    );
  }
  return tools;
}

/** The tools, each counting what it returned: what the worker read instead of the supervisor. */
function countingTools(tools: readonly WorkerTool[], tally: ExploreTally): WorkerTool[] {
  return tools.map((tool) => ({
    ...tool,
    run: async (input, context) => {
      const result = await tool.run(input, context);
      const bytes = Buffer.byteLength(result.content);
      tally.bytesRead += bytes;
      tally.pendingBytes += bytes;
      const path = (input as { path?: unknown } | null)?.path;
      if (tool.name === 'read_file' && typeof path === 'string' && !result.isError) {
        tally.filesRead.add(path);
      }
      return result;
    },
  }));
}

async function exploreCall(
  request: GenerateRequest,
  tally: ExploreTally,
  context: AppContext,
  { signal, onWaiting }: { signal: AbortSignal; onWaiting?: (what: string | undefined) => void },
  capUsd: number | undefined,
): Promise<GenerateResult> {
  const bytesSent = tally.pendingBytes;
  tally.pendingBytes = 0;
  const served = await callModel(
    {
      profile: tally.profile,
      request,
      bytesSent,
      kind: tally.kind,
      runId: tally.runId,
      signal,
      ...(onWaiting ? { onWaiting } : {}),
      ...(capUsd !== undefined ? { taskBudget: { capUsd, spentUsd: tally.costUsd } } : {}),
      onSpend: (usd) => (tally.costUsd += usd),
    },
    context,
  );
  tally.calls += 1;
  tally.inputTokens += served.result.usage.inputTokens;
  tally.outputTokens += served.result.usage.outputTokens;
  tally.modelAnswered = served.result.modelAnswered;
  tally.profile = served.profile;
  const text = served.result.content.flatMap((block) =>
    block.type === 'text' ? [block.text] : [],
  );
  if (text.join('').trim()) tally.lastText = text.join('').trim();
  return served.result;
}

function newTally(): Omit<ExploreTally, 'profile' | 'kind'> {
  return {
    runId: `x_${randomBytes(5).toString('hex')}`,
    started: Date.now(),
    calls: 0,
    turns: 0,
    costUsd: 0,
    inputTokens: 0,
    outputTokens: 0,
    bytesRead: 0,
    pendingBytes: 0,
    filesRead: new Set(),
    modelAnswered: '',
    lastText: '',
  };
}

async function formatExplore(
  answer: string,
  root: string,
  tally: ExploreTally,
  stopNote: string | undefined,
  kind: string,
  context: AppContext,
): Promise<string> {
  if (!answer.trim()) {
    await noteExplore(context, tally, kind, false, 'answer', stopNote !== undefined);
    throw new UserError(
      `The exploration gave no answer${stopNote ? ` (${stopNote})` : ''}. Ask a narrower question, or use another profile.`,
    );
  }
  const checked = await checkReferences(answer, root);
  const isWhole = stopNote === undefined && checked.check.broken.length === 0;
  await noteExplore(context, tally, kind, isWhole, 'answer', stopNote !== undefined);
  return [
    ...(stopNote ? [`(The exploration ${stopNote}; the answer may be incomplete.)`] : []),
    checked.answer,
    '',
    ...[referencesLine(checked.check)].filter((line): line is string => line !== undefined),
    exploreUsageLine(tally),
  ].join('\n');
}
