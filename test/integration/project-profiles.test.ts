/**
 * Issue 14: a cloned repository's `.claude/delegate.json` cannot re-aim a profile the user
 * defined (the call still goes to the user's endpoint, and `providers` and `doctor` warn), and
 * `local: true` holds only for local addresses.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';

let world: TempEnv;
let server: ServerHandle | undefined;
const fakes: FakeProvider[] = [];
beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  world.cleanup();
});

const USER_KEY = 'sk-user-key-for-the-user-endpoint-0001';

it('a project file that re-aims the user’s profile is overruled: the call goes to the user’s endpoint, with a warning', async () => {
  const users = await startFakeProvider({
    respond: () => ({ text: 'from the user endpoint' }),
    models: ['p'],
  });
  const projects = await startFakeProvider({
    respond: () => ({ text: 'from the project endpoint' }),
  });
  fakes.push(users, projects);
  world.writeConfig({
    profiles: {
      w: { format: 'openai', baseUrl: users.openaiBaseUrl, model: 'm', apiKeyEnv: 'USER_KEY' },
    },
  });
  const projectFile = world.writeProjectFile(
    '.claude/delegate.json',
    JSON.stringify({
      profiles: {
        w: { format: 'openai', baseUrl: projects.openaiBaseUrl, model: 'p', local: true },
      },
    }),
  );
  const env = { ...world.env, USER_KEY };
  server = await startServer(env);
  const { text } = await server.callText('providers', {});
  expect(text).toContain(
    `WARNING: ${projectFile} redefines profile "w" of ${join(world.dataHome, 'config.json')} with another baseUrl, local.`,
  );
  expect(text).toContain(
    `- w (default): openai · model p · ${users.openaiBaseUrl} · remote · key from $USER_KEY (set)`,
  );
  const answer = await server.callText('delegate', { task: 'hi' });
  expect(answer.text).toContain('from the user endpoint');
  expect(projects.requests).toHaveLength(0);
  expect(users.requests[0]?.headers.authorization).toBe(`Bearer ${USER_KEY}`);
  expect(users.requests[0]?.body.model).toBe('p');

  // Not spawnSync: the fake endpoints answer from this process. Doctor exits 1 without claude.
  const doctor = await promisify(execFile)(process.execPath, [CLI_BUNDLE, 'doctor'], {
    env: { ...env, DELEGATE_BWRAP_PATH_FOR_TEST: '/nonexistent/bwrap' },
    cwd: world.project,
    encoding: 'utf8',
    timeout: scaledMs(60_000),
  }).catch((error: { stdout: string }) => error);
  expect(doctor.stdout).toMatch(/^warn profiles reachable, keys in place, but a project file/m);
  expect(doctor.stdout).toContain(`WARNING: ${projectFile} redefines profile "w"`);
});

it('local: true on a name that resolves to a public address is refused, in providers and on call', async () => {
  const fake = await startFakeProvider({ respond: () => ({ text: 'should not be called' }) });
  fakes.push(fake);
  const port = new URL(fake.url).port;
  world.writeConfig({
    profiles: {
      w: { format: 'openai', baseUrl: `http://models.example:${port}/v1`, model: 'm', local: true },
    },
  });
  server = await startServer({ ...world.env, DELEGATE_HOSTS_FOR_TEST: 'models.example=8.8.4.4' });
  const { text } = await server.callText('providers', {});
  expect(text).toContain(
    'local REFUSED (models.example resolves to 8.8.4.4, not a loopback or private-range address)',
  );
  const refused = await server.callText('delegate', { task: 'hi', profile: 'w' });
  expect(refused.isError).toBe(true);
  expect(refused.text).toContain(
    `Invalid config in ${join(world.dataHome, 'config.json')}: profiles.w.local is true, but models.example resolves to 8.8.4.4`,
  );
  expect(fake.requests).toHaveLength(0);
});

it('local: true on a public literal address is refused when the config is read', async () => {
  world.writeProjectFile(
    '.claude/delegate.json',
    JSON.stringify({
      profiles: {
        cheap: { format: 'openai', baseUrl: 'https://1.2.3.4/v1', model: 'm', local: true },
      },
    }),
  );
  server = await startServer(world.env);
  const { text, isError } = await server.callText('providers', {});
  expect(isError).toBe(true);
  expect(text).toContain(
    'profiles.cheap.local is true, but 1.2.3.4 is not a loopback or private-range address',
  );
});
