import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
} from '../helpers/fake-provider.ts';
import { git, initRepository } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

let world: TempEnv;
let fake: FakeProvider | undefined;
let server: ServerHandle | undefined;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await endTaskTest(world, server, fake);
  server = undefined;
  fake = undefined;
}, 30_000);

const bash = (command: string): FakeReply => ({
  toolUses: [{ name: 'run_bash', input: { command } }],
});

async function startWith(steps: FakeReply[], sandbox = 'required'): Promise<ServerHandle> {
  fake = await startFakeProvider({ respond: byAssistantTurn(steps) });
  world.writeConfig({
    sandbox,
    profiles: {
      w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
    },
  });
  server = await startServer(world.env);
  return server;
}

const jobOf = (id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));

/** The text each run_bash call returned, in call order. */
function toolOutputs(): string[] {
  const last = fake!.requests.at(-1)?.body?.messages ?? [];
  return last
    .filter((message: { role: string }) => message.role === 'tool')
    .map((message: { content: unknown }) => String(message.content));
}

describe.runIf(process.platform === 'linux')('a task in a subdirectory, sandbox required', () => {
  for (const isolation of ['worktree', 'none'] as const) {
    it(`runs commands and passes its test (isolation ${isolation})`, async () => {
      initRepository(world.project, {
        'pkg/test.js': "require('fs').readFileSync('made.txt'); console.log('ok');\n",
        'README.md': '# repo\n',
      });
      const handle = await startWith([
        bash('pwd; echo made > made.txt; ls'),
        { text: 'Made made.txt.' },
      ]);
      const started = await handle.callText('task_start', {
        task: 'Make made.txt',
        workdir: 'pkg',
        isolation,
        test_command: 'node test.js',
      });
      expect(started.isError, started.text).toBe(false);
      const id = taskIdOf(started.text);
      const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 60_000);
      expect(done, JSON.stringify(toolOutputs())).toMatch(new RegExp(`^${id} done passed`));
      expect(jobOf(id).sandboxed).toBe(true);
      expect(toolOutputs()[0]).toMatch(/\/pkg\n.*made\.txt/s);
      const made =
        isolation === 'none'
          ? join(world.project, 'pkg', 'made.txt')
          : join(jobOf(id).worktreePath, 'pkg', 'made.txt');
      expect(existsSync(made)).toBe(true);
      expect(git(world.project, 'status', '--porcelain')).toBe(
        isolation === 'none' ? '?? pkg/made.txt' : '',
      );
    });
  }
});
