/**
 * The task world of the SSH-runner suites: `startWith(steps, config?, env?)` starts a fake
 * provider answering the worker's turns with `steps`, writes a config with runner `build` (the
 * suite's sshd) and profile `w` keyed by {@link WORKER_KEY}, and starts a server.
 */
import { byAssistantTurn, type FakeReply } from './fake-provider.ts';
import type { ServerHandle } from './mcp-server.ts';
import { runnerConfig, type SshdFixture } from './sshd.ts';
import { taskTest } from './task-world.ts';

/** The provider key: it must never reach the runner. */
export const WORKER_KEY = 'sk-runner-canary-7f6e5d4c3b2a1908';

/** A turn of the worker that runs `command` (after `delayMs`). */
export const bash = (command: string, delayMs?: number): FakeReply => ({
  toolUses: [{ name: 'run_bash', input: { command } }],
  ...(delayMs ? { delayMs } : {}),
});

/** What a task on a runner ends in, as its status line starts. */
export const ENDED = /^t_[a-z0-9]+ (done|failed|lost|timeout|cancelled)/;

/** The suite's test function, whose runner is the sshd `sshd()` returns when a test runs. */
export function runnerTest(sshd: () => SshdFixture) {
  return taskTest.extend(
    'startWith',
    ({ world, provider, server }) =>
      async (
        steps: FakeReply[],
        config: Record<string, unknown> = {},
        env: Record<string, string> = {},
      ): Promise<ServerHandle> => {
        const fake = await provider.start({ respond: byAssistantTurn(steps) });
        world.writeConfig({
          runners: { build: runnerConfig(sshd()) },
          ...config,
          profiles: {
            w: {
              format: 'openai',
              baseUrl: fake.openaiBaseUrl,
              model: 'worker-model',
              apiKeyEnv: 'WORKER_KEY',
            },
          },
        });
        return server.start({
          ...world.env,
          WORKER_KEY,
          DELEGATE_RUNNER_RETRY_MS: '50',
          ...env,
        });
      },
  );
}
