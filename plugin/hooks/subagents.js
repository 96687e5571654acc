// delegate's Claude Code mod (a hooks module; see docs/subagents.md). When the model calls the
// Agent tool with a subagent type the user's own config maps to a worker
// (`"subagents": {"Explore": "local"}` in <data home>/config.json), the worker answers it and the
// model reads the report as it reads its own subagent's: no Claude tokens are spent on it.
// Unmapped types, forks, named and isolated agents, and every failure of the worker leave the
// call to Claude's own subagent (with one line saying why), so no call is ever lost.
//
// Hand-written, not bundled: Claude Code reads this file's source when it loads it, and accepts
// `$` only as written here (passed to functions declared at the top of this file).

/** How long the worker may take; the CLI answers before it (a task goes on, said so). */
const WORKER_TIMEOUT_MS = 600000;

/** The Agent tool's own record of a finished subagent, so the model reads its usual hand-back. */
function completed(text, e, started) {
  return {
    status: 'completed',
    agentId: `delegate-${started.toString(36)}`,
    agentType: e.subagent_type ?? 'general-purpose',
    // No SendMessage continuation: there is no agent left to message.
    canContinueAgent: false,
    prompt: e.prompt,
    content: [{ type: 'text', text }],
    resolvedModel: 'delegate-worker',
    totalToolUseCount: 0,
    totalDurationMs: Date.now() - started,
    // The worker's tokens are not Claude's: delegate's own ledger counts them.
    totalTokens: 0,
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      server_tool_use: null,
      service_tier: null,
      cache_creation: null,
    },
  };
}

/** The user's `subagents` map (type → profile), read at each call so edits apply at once. */
async function mappedProfile($, type) {
  const dataHome = (await $.env.get('DELEGATE_HOME')) || `${await $.env.get('HOME')}/.delegate`;
  let config;
  try {
    // As delegate reads it: a byte-order mark is allowed.
    config = JSON.parse((await $.fs.read(`${dataHome}/config.json`)).replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
  const map = config && typeof config.subagents === 'object' ? config.subagents : {};
  return Object.prototype.hasOwnProperty.call(map, type) ? String(map[type]) : undefined;
}

/** The worker's report, from `delegate subagent`; throws with its one line on any failure. */
async function askWorker($, type, e) {
  const root = $.plugin.root;
  const run = await $.process.run(
    [
      'sh',
      `${root}/launch/run-node.sh`,
      'cli',
      `${root}/dist/cli.mjs`,
      'subagent',
      '--type',
      type,
      '-',
    ],
    { stdin: e.prompt, timeoutMs: WORKER_TIMEOUT_MS },
  );
  if (run.exitCode !== 0) {
    const line = run.stderr.trim().split('\n').pop() || `exit ${run.exitCode}`;
    throw new Error(line.replace(/^delegate: /, ''));
  }
  return run.stdout.trim();
}

export const register = (on) => {
  on('tool.run', { tool: 'Agent' }, async ($, e, next) => {
    const type = e.subagent_type ?? 'general-purpose';
    // Forks share the conversation; named and team agents take messages; isolated ones want
    // their own worktree: Claude's own, all of them.
    if (type === 'fork' || e.name || e.team_name || e.isolation) return next(e);
    const profile = await mappedProfile($, type);
    if (profile === undefined) return next(e);
    const started = Date.now();
    try {
      return { result: completed(await askWorker($, type, e), e, started) };
    } catch (error) {
      // The person interrupted: the turn is over, nothing runs in the call's place.
      if (next.signal.aborted) return { deny: 'interrupted' };
      const reason = String(error?.message ?? error).split('\n')[0];
      const why = `delegate: the worker "${profile}" did not answer this ${type} subagent (${reason}); Claude's own subagent ran instead.`;
      $.ui.log(why);
      const ran = await next(e);
      return { ...ran, context: [...(ran.context ?? []), why] };
    }
  }).catch(($, e, next) => next(e));
};
