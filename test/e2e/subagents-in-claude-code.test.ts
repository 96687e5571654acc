/**
 * Claude Code's own subagents on workers (issue 30): the real Claude Code, a scripted supervisor
 * that calls the Agent tool with subagent type Explore, and the user's config mapping Explore to
 * a worker. The plugin's mod (hooks/subagents.js) answers the call from the worker: the
 * supervisor reads the worker's report as the Agent result, and the supervisor endpoint gets no
 * request for the subagent's conversation. With the worker down, Claude's own subagent runs and
 * one line says why.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { runClaude, type ClaudeRun } from '../helpers/claude-cli.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { toolResults } from '../helpers/supervisor.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

const WORKER_ANSWER = 'WORKER-REPORT: refunds are handled in src/refunds.ts:1.';
const CLAUDE_SUBAGENT_ANSWER = 'CLAUDE-SUBAGENT-REPORT: refunds live in src/refunds.ts.';
const AGENT_CALL = {
  name: 'Agent',
  input: {
    description: 'Find refunds',
    prompt: 'Where are refunds handled in this project?',
    subagent_type: 'Explore',
    run_in_background: false,
  },
};

let world: TempEnv;
let worker: FakeProvider;
let supervisor: FakeProvider;

/** A request of a subagent's own conversation: Claude Code marks them with this header. */
const isSubagentRequest = (request: RecordedRequest) =>
  request.headers['x-claude-code-agent-id'] !== undefined;

beforeEach(async () => {
  world = createTempEnv();
  world.writeProjectFile('src/refunds.ts', 'export function refund() {}\n');
  worker = await startFakeProvider({ respond: () => ({ text: WORKER_ANSWER }) });
  const main = byAssistantTurn([{ toolUses: [AGENT_CALL] }, { text: 'Found them.' }]);
  supervisor = await startFakeProvider({
    respond: (request) =>
      isSubagentRequest(request) ? { text: CLAUDE_SUBAGENT_ANSWER } : main(request),
  });
});
afterEach(async () => {
  await worker.close();
  await supervisor.close();
  world.cleanup();
});

function configWith(workerUrl: string): void {
  world.writeConfig({
    profiles: {
      local: { format: 'openai', baseUrl: workerUrl, model: 'worker-model', local: true },
    },
    subagents: { Explore: 'local' },
  });
}

function runSupervisor(): Promise<ClaudeRun> {
  return runClaude({
    prompt: 'Where are refunds handled?',
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor.url,
    pluginDir: PLUGIN_ROOT,
    allowedTools: ['Agent'],
    env: {
      DELEGATE_HOME: world.dataHome,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: world.env.DELEGATE_DISCOVERY_URLS_FOR_TEST!,
    },
  });
}

/** The Agent call's result as the supervisor's last main-loop request carried it. */
function agentResult(): { text: string; isError: boolean } | undefined {
  const last = supervisor.requests.filter((request) => !isSubagentRequest(request)).at(-1)!;
  const results = [...toolResults(last).values()];
  return results.at(-1);
}

describe('Claude Code subagents mapped to a worker', () => {
  it('a mapped Explore call is answered by the worker: the supervisor reads its report, no subagent request', async () => {
    configWith(worker.openaiBaseUrl);
    const run = await runSupervisor();
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.result?.result).toContain('Found them.');
    // The worker got the subagent's prompt, and its report came back as the Agent result.
    expect(JSON.stringify(worker.requests[0]?.body.messages)).toContain(
      'Where are refunds handled in this project?',
    );
    const result = agentResult();
    expect(result?.isError).toBe(false);
    expect(result?.text).toContain(WORKER_ANSWER);
    expect(result?.text).toContain('references: 1 checked against the files, all found');
    expect(result?.text).toContain('[subagent on a worker: profile local');
    // Claude's subagent never ran: only the two main-loop requests reached the supervisor API.
    expect(supervisor.requests.filter(isSubagentRequest)).toEqual([]);
    expect(supervisor.requests).toHaveLength(2);
    // delegate's ledger counts the worker's calls as a re-homed subagent.
    expect(readLedger(world.dataHome).map((record) => record.kind)).toEqual(['subagent']);
  });

  it('with the worker down, Claude’s own subagent runs, and one line says why', async () => {
    configWith('http://127.0.0.1:9/v1');
    const run = await runSupervisor();
    expect(run.exitCode, run.stderr).toBe(0);
    expect(supervisor.requests.filter(isSubagentRequest).length).toBeGreaterThan(0);
    expect(agentResult()?.text).toContain(CLAUDE_SUBAGENT_ANSWER);
    const last = supervisor.requests.filter((request) => !isSubagentRequest(request)).at(-1)!;
    expect(JSON.stringify(last.body)).toMatch(
      /delegate: the worker \\"local\\" did not answer this Explore subagent \(.+\); Claude's own subagent ran instead\./,
    );
  });

  it('an unmapped type is Claude’s own, untouched', async () => {
    world.writeConfig({ profiles: {}, subagents: { Plan: 'local' } });
    const run = await runSupervisor();
    expect(run.exitCode, run.stderr).toBe(0);
    expect(agentResult()?.text).toContain(CLAUDE_SUBAGENT_ANSWER);
    expect(JSON.stringify(supervisor.requests.at(-1)?.body)).not.toContain('delegate: the worker');
  });
});
