import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCliWorld, type CliWorld } from '../helpers/cli-engine-world.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest, liveProcesses } from '../helpers/processes.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

let world: CliWorld;
let server: ServerHandle | undefined;
beforeEach(() => {
  world = createCliWorld();
  world.writeConfig({
    defaultProfile: 'cc',
    profiles: {
      cc: { format: 'claude-cli', model: 'sonnet' },
      cx: { format: 'codex-cli', model: 'gpt-5', sandboxMode: 'read-only', effort: 'high' },
    },
  });
});
afterEach(async () => {
  await endTaskTest(world, server);
  server = undefined;
});

// A stand-in `claude` that sleeps for a length no other run on the machine uses, so what is
// left of this test's processes is told apart from any other test's.
const SLEEP = `sleep 120.${process.pid}`;
const sleepers = () => liveProcesses((facts) => facts.commandLine === `${SLEEP} `);

describe('CLI-engine profiles', () => {
  it('are listed by providers, refused by delegate with a clear error, and one task per checkout', async () => {
    // A stand-in `claude` that stays silent: only our controls are under test here.
    world.writeBinary('claude', `#!/bin/sh\nexec ${SLEEP}\n`);
    server = await startServer(world.env);
    const listed = await server.callText('providers', {});
    expect(listed.isError, server.stderr()).toBe(false);
    expect(listed.text).toContain('claude-cli');
    expect(listed.text).toContain('codex-cli');

    const delegated = await server.callText('delegate', { task: 'Say hi' });
    expect(delegated.isError).toBe(true);
    expect(delegated.text).toContain('CLI engine');

    const first = await server.callText('task_start', { task: 'One', isolation: 'none' });
    expect(first.isError, first.text).toBe(false);
    const id = taskIdOf(first.text);
    await pollTaskStatus(server, id, /running/, 10_000);
    const second = await server.callText('task_start', { task: 'Two', isolation: 'none' });
    expect(second.isError).toBe(true);
    expect(second.text).toContain(`Task ${id} is already working in`);
    expect(second.text).toContain('One task per checkout');

    // A missing codex names its package before anything is made.
    const codex = await server.callText('task_start', { task: 'x', profile: 'cx' });
    expect(codex.isError).toBe(true);
    expect(codex.text).toContain('npm install -g @openai/codex');

    await waitFor(() => sleepers().length === 1);
    const cancelled = await server.callText('task_cancel', { task_id: id });
    // Cancel returns once every process of the task is gone.
    expect(cancelled.text).toMatch(new RegExp(`^${id} cancelled`));
    expect(cancelled.text).not.toContain('Still stopping');
    expect(sleepers()).toEqual([]);
  });

  it('a CLI’s pool caps its runs across tasks: the next one waits for a slot', async () => {
    world.writeConfig({ profiles: { cc: { format: 'claude-cli', model: 'sonnet', pool: 1 } } });
    world.writeBinary('claude', `#!/bin/sh\nexec ${SLEEP}\n`);
    server = await startServer(world.env);
    const first = taskIdOf((await server.callText('task_start', { task: 'One' })).text);
    await pollTaskStatus(server, first, /running/, 10_000);
    const second = taskIdOf((await server.callText('task_start', { task: 'Two' })).text);
    await pollTaskStatus(server, second, /waiting for a claude-cli slot/, 10_000);
    await server.callText('task_cancel', { task_id: first });
    // The slot passes on: the second task's CLI starts.
    await waitFor(() => sleepers().length === 1);
    await server.callText('task_cancel', { task_id: second });
    expect(sleepers()).toEqual([]);
  });

  it('a login profile’s CLI runs in the OS sandbox with its login readable and the other secrets hidden', async () => {
    world.writeConfig({
      sandbox: 'required',
      profiles: { cc: { format: 'claude-cli', model: 'sonnet' } },
    });
    mkdirSync(join(world.home, '.claude'));
    writeFileSync(join(world.home, '.claude', '.credentials.json'), 'LOGIN-TOKEN');
    mkdirSync(join(world.home, '.ssh'));
    writeFileSync(join(world.home, '.ssh', 'id_rsa'), 'SSH-SECRET');
    // A stand-in that reports what it could read, the way Claude Code reports its result.
    world.writeBinary(
      'claude',
      [
        '#!/bin/sh',
        'login=$(cat "$CLAUDE_CONFIG_DIR/.credentials.json" 2>&1)',
        'ssh=$(cat "$HOME/.ssh/id_rsa" 2>&1 | tr -d \'"\')',
        'printf \'{"type":"result","result":"login=%s ssh=%s"}\\n\' "$login" "$ssh"',
        '',
      ].join('\n'),
    );
    server = await startServer(world.env);
    const id = taskIdOf((await server.callText('task_start', { task: 'Read' })).text);
    await pollTaskStatus(server, id, /done|failed|timeout|lost/, 30_000);
    const result = await server.callText('task_result', { task_id: id });
    expect(result.text).toContain('login=LOGIN-TOKEN');
    expect(result.text).not.toContain('SSH-SECRET');
    expect(result.text).not.toContain('unsandboxed');
    const progress = await server.callText('task_progress', { task_id: id });
    expect(progress.text).toContain(
      'sandbox: on · network: api.anthropic.com, platform.claude.com',
    );
  });

  it('without a working sandbox under "auto", a CLI task runs unsandboxed and says so', async () => {
    world.writeBinary('claude', '#!/bin/sh\necho \'{"type":"result","result":"ran"}\'\n');
    server = await startServer({ ...world.env, DELEGATE_BWRAP_PATH_FOR_TEST: '/nonexistent' });
    const id = taskIdOf((await server.callText('task_start', { task: 'Run' })).text);
    const status = await pollTaskStatus(server, id, /done|failed|timeout|lost/, 30_000);
    expect(status).toMatch(new RegExp(`^${id} done .* · unsandboxed$`));
    const progress = await server.callText('task_progress', { task_id: id });
    expect(progress.text).toContain('sandbox: off — unsandboxed (the OS sandbox is not available');
  });
});
