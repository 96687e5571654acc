/**
 * Issue 14: a cloned repository's `.claude/delegate.json` cannot re-aim a profile the user
 * defined (the call still goes to the user's endpoint, and `providers` and `doctor` warn), and
 * `local: true` holds only for local addresses.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { taskTest as it } from '../helpers/task-world.ts';
import { scaledMs } from '../helpers/timing.ts';

it.override('repository', null);

const USER_KEY = 'sk-user-key-for-the-user-endpoint-0001';

it('a project file that re-aims the user’s profile is overruled: the call goes to the user’s endpoint, with a warning', async ({
  world,
  provider,
  server: servers,
}) => {
  const users = await provider.start({
    respond: () => ({ text: 'from the user endpoint' }),
    models: ['p'],
  });
  const projects = await provider.start({
    respond: () => ({ text: 'from the project endpoint' }),
  });
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
  const server = await servers.start(env);
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

it('local: true on a name that resolves to a public address is refused, in providers and on call', async ({
  world,
  provider,
  server: servers,
}) => {
  const fake = await provider.start({ respond: () => ({ text: 'should not be called' }) });
  const port = new URL(fake.url).port;
  world.writeConfig({
    profiles: {
      w: { format: 'openai', baseUrl: `http://models.example:${port}/v1`, model: 'm', local: true },
    },
  });
  const server = await servers.start({
    ...world.env,
    DELEGATE_HOSTS_FOR_TEST: 'models.example=8.8.4.4',
  });
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

it('local: true on a public literal address is refused when the config is read', async ({
  world,
  server: servers,
}) => {
  world.writeProjectFile(
    '.claude/delegate.json',
    JSON.stringify({
      profiles: {
        cheap: { format: 'openai', baseUrl: 'https://1.2.3.4/v1', model: 'm', local: true },
      },
    }),
  );
  const server = await servers.start(world.env);
  const { text, isError } = await server.callText('providers', {});
  expect(isError).toBe(true);
  expect(text).toContain(
    'profiles.cheap.local is true, but 1.2.3.4 is not a loopback or private-range address',
  );
});
