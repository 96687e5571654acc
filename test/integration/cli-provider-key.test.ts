import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { waitFor } from '../helpers/wait.ts';

const LAUNCHER = join(PLUGIN_ROOT, 'bin', 'delegate');
const KEY = 'sk-cli-canary-9b8c7d6e5f4a3b2c1d0e';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
  world.writeConfig({
    profiles: { fast: { format: 'openai', baseUrl: 'https://api.example.test/v1', model: 'm' } },
  });
});
afterEach(() => world.cleanup());

const credentialsFile = () => join(world.dataHome, 'credentials.json');
const stored = () =>
  JSON.parse(readFileSync(credentialsFile(), 'utf8')).keys as Record<
    string,
    { key: string; origin: string }
  >;

function run(args: string[], input = '', shellPrefix = '') {
  const command = `${shellPrefix}exec "${LAUNCHER}" ${args.map((arg) => `'${arg}'`).join(' ')}`;
  return spawnSync('sh', ['-c', command], {
    env: world.env,
    input,
    encoding: 'utf8',
    cwd: world.project,
  });
}

describe('delegate provider-key', () => {
  it('reads the key from stdin when it is not a terminal, and stores it 0600 even under umask 000', () => {
    const result = run(['provider-key', 'fast'], `${KEY}\n`, 'umask 000; ');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(
      `Stored the key for profile "fast" in ${credentialsFile()} (mode 0600); it is sent only to https://api.example.test`,
    );
    expect(result.stdout + result.stderr).not.toContain(KEY);
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    expect(stored().fast).toMatchObject({ key: KEY, origin: 'https://api.example.test' });
  });

  it('on a terminal, reads the key without echo', async () => {
    if (spawnSync('script', ['--version']).status !== 0) return;
    const child = spawn('script', ['-qec', `"${LAUNCHER}" provider-key fast`, '/dev/null'], {
      env: world.env,
      cwd: world.project,
    });
    let transcript = '';
    child.stdout.on('data', (chunk: Buffer) => (transcript += chunk.toString()));
    try {
      await waitFor(() => transcript.includes('Key (input hidden): '), 10_000);
      child.stdin.write(`${KEY}\r`);
      await waitFor(() => transcript.includes('Stored the key'), 10_000);
    } finally {
      child.kill('SIGKILL');
    }
    expect(transcript).toContain(
      'API key for the delegate profile "fast" (m). It will be sent only to https://api.example.test',
    );
    expect(transcript).not.toContain(KEY);
    expect(stored().fast?.key).toBe(KEY);
  });

  it('refuses a key given as an argument, unknown profiles and commands, with exit codes', () => {
    const asArgument = run(['provider-key', 'fast', KEY]);
    expect(asArgument.status).toBe(2);
    expect(asArgument.stderr).toContain(
      'the key is read from the terminal or stdin, never an argument',
    );
    const unknown = run(['provider-key', 'nope'], KEY);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toBe(
      'delegate: Unknown profile "nope" (profiles: fast). Create it first with a profile in config.json in DELEGATE_HOME (~/.delegate), or provider_set in Claude Code.\n',
    );
    const empty = run(['provider-key', 'fast'], '\n');
    expect(empty.status).toBe(1);
    expect(empty.stderr).toContain('The key was empty; nothing was stored.');
    expect(existsSync(credentialsFile())).toBe(false);
    const command = run(['frobnicate']);
    expect(command.status).toBe(2);
    expect(command.stderr).toContain('delegate: unknown command "frobnicate".');
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/delegate provider-key <profile>\n +store a profile's API key/);
  });
});
