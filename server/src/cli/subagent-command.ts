import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { agentRootsFor, findAgent, type AgentDefinition } from '../agent/agents.ts';
import { READ_ONLY_TOOLS } from '../agent/worker-tools/index.ts';
import { runExplore } from '../delegation/run-explore.ts';
import { loadConfig } from '../profiles/load-config.ts';
import { isTerminal } from '../store/job-store.ts';
import { getTask } from '../tasks/task-queries.ts';
import { startTask } from '../tasks/start-task.ts';
import { reviewTask } from '../tasks/task-actions.ts';
import { TOOL_WORDING } from '../util/wording.ts';
import { UserError } from '../util/user-error.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand, CliContext } from './cli-command.ts';
import { readAll } from './run-command.ts';

const USAGE = 'subagent --type <subagent type> -';

/** Claude Code's own subagent types that only read. */
const READ_ONLY_TYPES = new Set(['Explore', 'Plan']);
/** How long a writing subagent's task is waited for before the answer says it goes on. */
const TASK_WAIT_MS = 9 * 60_000;
const POLL_MS = 500;
/** Exit code for a type the user's config does not map: the caller lets Claude's subagent run. */
export const NOT_MAPPED = 3;

/**
 * `delegate subagent`: what the plugin's Claude Code mod runs for an `Agent` call whose subagent
 * type the user's config maps to a profile (`"subagents": {"Explore": "local"}`). The prompt is
 * read from stdin; the report goes to stdout, as the subagent's own would. A type that only
 * reads (Explore, Plan, or an agent definition whose tools all read) runs as an exploration; any
 * other runs as a task in place (it edits the files, as Claude's subagent would), waited for.
 * Any failure exits non-zero with one line on stderr, and the mod lets Claude's subagent run.
 */
export const subagentCommand: CliCommand = {
  usage: USAGE,
  summary: "run a mapped Claude Code subagent call on a worker (used by the plugin's mod)",
  help: `Reads the subagent's prompt from stdin and answers it with the worker the user's config maps the type to
("subagents" in config.json): read-only types as an exploration, others as a task in place, waited for
up to 9 minutes. Exit 3 when the type is not mapped; any other failure exits 1 with one line on stderr.`,
  async run(args, context) {
    const parsed = parseCli(args, { type: { type: 'string' } }, USAGE, context);
    if (!parsed) return 2;
    const type = parsed.values.type;
    if (!type || parsed.positionals[0] !== '-') {
      return usageError(context, 'give --type and - (the prompt on stdin).', USAGE);
    }
    const config = loadConfig(context.dataHome, context.projectDir, context.env);
    const profile = config.subagents?.get(type);
    if (profile === undefined) {
      context.stderr.write(
        `delegate: subagent type "${type}" is not mapped to a worker ("subagents" in ${config.configFile}).\n`,
      );
      return NOT_MAPPED;
    }
    const prompt = (await readAll(context.stdin)).trim();
    if (!prompt) throw new UserError('the subagent prompt read from stdin is empty.');
    const app: AppContext = {
      ...context,
      workerScript: join(context.pluginRoot, 'dist', 'task-worker.mjs'),
    };
    const agent = definitionOf(type, context);
    const report = isReadOnly(type, agent)
      ? await runExplore(
          { question: prompt, profile, kind: 'subagent', ...(agent ? { agent: type } : {}) },
          app,
        )
      : await runAsTask(prompt, profile, agent ? type : undefined, app);
    context.stdout.write(`${report}\n`);
    return 0;
  },
};

/** The type's definition by the 3-tier lookup (Claude Code's own agents folders among them). */
function definitionOf(type: string, context: CliContext): AgentDefinition | undefined {
  try {
    return findAgent(type, agentRootsFor(context.projectDir, context.env, context.pluginRoot));
  } catch {
    // A name the lookup refuses (`plugin:agent`) has no definition here.
    return undefined;
  }
}

/** Explore and Plan, or a definition naming tools that all only read. */
function isReadOnly(type: string, agent: AgentDefinition | undefined): boolean {
  if (!agent) return READ_ONLY_TYPES.has(type);
  const readOnly = new Set(READ_ONLY_TOOLS.map((tool) => tool.name));
  return agent.tools !== undefined && agent.tools.every((tool) => readOnly.has(tool));
}

/** A writing subagent: a task in place on the worker, waited for; its result is the report. */
async function runAsTask(
  prompt: string,
  profile: string,
  agent: string | undefined,
  context: AppContext,
): Promise<string> {
  const job = await startTask(
    { task: prompt, profile, isolation: 'none', ...(agent ? { agent } : {}) },
    context,
  );
  const deadline = Date.now() + TASK_WAIT_MS;
  // Reconciled at each look: a worker that died ends the task lost, not a 9-minute wait.
  while (!isTerminal((await getTask(context.dataHome, job.id)).state) && Date.now() < deadline) {
    await sleep(POLL_MS);
  }
  const review = await reviewTask(context.dataHome, job.id, { wording: TOOL_WORDING });
  const ended = isTerminal(review.job.state);
  return ended
    ? review.text
    : `${review.text}\nIt goes on in place as delegate task ${job.id}; its result comes with the task's notification, or ask delegate's task_status.`;
}
