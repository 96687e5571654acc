import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { startElicitingServer, type ElicitingServer } from '../helpers/eliciting-client.ts';
import { PLUGIN_ROOT, type ServerHandle, startServer } from '../helpers/mcp-server.ts';
import { createTempEnv, projectApprovals, type TempEnv } from '../helpers/temp-env.ts';

const KEY = 'sk-canary-4f1d9a7e2b6c8d0e1f2a3b4c';

let world: TempEnv;
let fake: FakeProvider;
let other: FakeProvider | undefined;
let server: ElicitingServer | ServerHandle | undefined;

beforeEach(async () => {
  world = createTempEnv();
  fake = await startFakeProvider({ respond: () => ({ text: 'answer' }) });
});
afterEach(async () => {
  await server?.close();
  await fake.close();
  await other?.close();
  server = other = undefined;
  world.cleanup();
});

const credentialsFile = () => join(world.dataHome, 'credentials.json');
const modeOf = (path: string) => statSync(path).mode & 0o777;
const storedKeys = () =>
  (JSON.parse(readFileSync(credentialsFile(), 'utf8')) as { keys: Record<string, unknown> }).keys;
const accept = (value: string) => () => ({ action: 'accept' as const, content: { value } });

describe('provider_key through MCP elicitation', () => {
  it('accept: asks the user, stores the key 0600 bound to the host, and calls send it', async () => {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const elicit = await startElicitingServer(world.env, accept(KEY));
    server = elicit;
    const { text, isError } = await elicit.callText('provider_key', { profile: 'w' });
    expect(isError).toBe(false);
    expect(text).toContain(
      `Stored the key for profile "w" in ${credentialsFile()} (mode 0600); it is sent only to ${fake.url}`,
    );
    expect(elicit.questions).toHaveLength(1);
    expect(elicit.questions[0]?.message).toContain(`"w" (m). It will be sent only to ${fake.url}`);
    expect(elicit.questions[0]).toMatchObject({
      mode: 'form',
      requestedSchema: { properties: { value: { type: 'string', title: 'API key' } } },
    });
    expect(modeOf(credentialsFile())).toBe(0o600);
    expect(storedKeys()).toMatchObject({ w: { key: KEY, origin: fake.url } });
    const answer = await elicit.callText('delegate', { task: 'hi' });
    expect(answer.isError).toBe(false);
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    const providers = await elicit.callText('providers', {});
    expect(providers.text).toContain(`key stored in credentials.json for ${fake.url}`);
    for (const shown of [text, answer.text, providers.text, elicit.stderr()])
      expect(shown).not.toContain(KEY);
  });

  it('accept for an anthropic profile: the stored key goes out as x-api-key', async () => {
    world.writeConfig({ profiles: { a: { format: 'anthropic', baseUrl: fake.url, model: 'm' } } });
    server = await startElicitingServer(world.env, accept(`  ${KEY}\n`));
    expect((await server.callText('provider_key', { profile: 'a' })).isError).toBe(false);
    expect((await server.callText('delegate', { task: 'hi' })).isError).toBe(false);
    expect(fake.requests[0]?.headers['x-api-key']).toBe(KEY);
  });

  for (const action of ['decline', 'cancel'] as const) {
    it(`${action}: stores nothing and says so, without an error`, async () => {
      world.writeConfig({
        profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
      });
      const elicit = await startElicitingServer(world.env, () => ({ action }));
      server = elicit;
      const { text, isError } = await elicit.callText('provider_key', { profile: 'w' });
      expect(isError).toBe(false);
      expect(text).toBe(
        `The user ${action === 'cancel' ? 'cancelled' : 'declined'}; no key was stored for "w". Do not ask again unless the user wants to.`,
      );
      expect(existsSync(credentialsFile())).toBe(false);
    });
  }

  it('unsupported: a client without elicitation gets the terminal and variable ways', async () => {
    world.writeConfig({
      profiles: { fast: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    server = await startServer(world.env);
    const { text, isError } = await server.callText('provider_key', { profile: 'fast' });
    expect(isError).toBe(true);
    expect(text).toContain('This client cannot ask the user for input (no MCP elicitation)');
    expect(text).toContain(`\`${join(PLUGIN_ROOT, 'bin', 'delegate')} provider-key fast\``);
    expect(text).toContain('"api_key_env": "FAST_API_KEY"');
    expect(existsSync(credentialsFile())).toBe(false);
  });

  it('refuses a key passed as an argument, unknown profiles and unusable input, storing nothing', async () => {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const elicit = await startElicitingServer(world.env, accept('sk-has spaces inside-0123456789'));
    server = elicit;
    const withKey = await elicit.callText('provider_key', { profile: 'w', key: KEY });
    expect(withKey).toMatchObject({ isError: true });
    expect(withKey.text).toContain(
      'provider_key takes only profile (got key): keys are never tool arguments',
    );
    expect(withKey.text).not.toContain(KEY);
    const unknown = await elicit.callText('provider_key', { profile: 'nope' });
    expect(unknown).toEqual({
      isError: true,
      text: 'Unknown profile "nope" (profiles: w). Create it first with provider_set.',
    });
    expect(elicit.questions).toHaveLength(0);
    const spaced = await elicit.callText('provider_key', { profile: 'w' });
    expect(spaced.isError).toBe(true);
    expect(spaced.text).toMatch(/^The key contains spaces.*nothing was stored/);
    expect(spaced.text).not.toContain('has spaces');
    expect(existsSync(credentialsFile())).toBe(false);
  });
});

describe('credentials.json file modes', () => {
  it('a looser existing file is repaired to 0600 and the repair reported, keeping its keys', async () => {
    writeFileSync(
      credentialsFile(),
      JSON.stringify({
        version: 1,
        keys: { old: { key: 'sk-old-key-0000000000', origin: 'https://x.test', savedAt: '' } },
      }),
    );
    chmodSync(credentialsFile(), 0o644);
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    server = await startElicitingServer(world.env, accept(KEY));
    const { text } = await server.callText('provider_key', { profile: 'w' });
    expect(text).toContain(
      `${credentialsFile()} was readable by other users (mode 0644); it is now 0600.`,
    );
    expect(modeOf(credentialsFile())).toBe(0o600);
    expect(Object.keys(storedKeys()).sort()).toEqual(['old', 'w']);
  });

  it('providers repairs and reports a loose file too', async () => {
    writeFileSync(credentialsFile(), JSON.stringify({ version: 1, keys: {} }));
    chmodSync(credentialsFile(), 0o640);
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    server = await startServer(world.env);
    const { text } = await server.callText('providers', {});
    expect(text).toMatch(
      /^.*credentials\.json was readable by other users \(mode 0640\); it is now 0600\./,
    );
    expect(modeOf(credentialsFile())).toBe(0o600);
  });

  it('a broken credentials.json is reported without quoting its content', async () => {
    writeFileSync(credentialsFile(), `{"keys": {"w": {"key": "${KEY}"`, { mode: 0o600 });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    server = await startServer(world.env);
    const { text, isError } = await server.callText('delegate', { task: 'hi' });
    expect(isError).toBe(true);
    expect(text).toContain(
      'credentials.json is not valid JSON (cut off: the text ends early, as after an interrupted write), so the keys stored in it cannot be read. Move it away',
    );
    expect(text).not.toContain(KEY);
  });
});

describe('keys bound to hosts', () => {
  async function storeKeyFor(name: string): Promise<ElicitingServer> {
    const elicit = await startElicitingServer(world.env, accept(KEY));
    server = elicit;
    expect((await elicit.callText('provider_key', { profile: name })).isError).toBe(false);
    return elicit;
  }

  it('provider_set to another host drops the key and asks for it again; the new host never gets it', async () => {
    other = await startFakeProvider({ respond: () => ({ text: 'other answer' }) });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const elicit = await storeKeyFor('w');
    const moved = await elicit.callText('provider_set', {
      name: 'w',
      base_url: other.openaiBaseUrl,
    });
    expect(moved.text).toContain(
      `The key stored for ${fake.url} was dropped: a key is only ever sent to the host it was entered for.`,
    );
    expect(moved.text).toContain('call provider_key {"profile": "w"}');
    expect(storedKeys()).toEqual({});
    await elicit.callText('delegate', { task: 'hi' });
    expect(other.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('a config edited to point at another host: the key is not sent and the call says to re-enter it', async () => {
    other = await startFakeProvider({ respond: () => ({ text: 'other answer' }) });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const elicit = await storeKeyFor('w');
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: other.openaiBaseUrl, model: 'm' } },
    });
    const { text, isError } = await elicit.callText('delegate', { task: 'hi' });
    expect(isError).toBe(true);
    expect(text).toBe(
      `Profile "w" has a stored key entered for ${fake.url}, but its baseUrl now points at ${other.url}, so the key was not sent. ` +
        `If you trust ${other.url}, ask the user to enter its key: call provider_key {"profile": "w"} (or run \`delegate provider-key w\` in a terminal).`,
    );
    expect(other.requests).toHaveLength(0);
    const providers = await elicit.callText('providers', {});
    expect(providers.text).toContain(
      `stored key was entered for ${fake.url}, NOT sent to ${other.url}: run provider_key again`,
    );
  });

  it('the same host under another path keeps its key', async () => {
    world.writeConfig({
      profiles: { w: { format: 'anthropic', baseUrl: `${fake.url}/gateway`, model: 'm' } },
    });
    const elicit = await storeKeyFor('w');
    world.writeConfig({ profiles: { w: { format: 'anthropic', baseUrl: fake.url, model: 'm' } } });
    expect((await elicit.callText('delegate', { task: 'hi' })).isError).toBe(false);
    expect(fake.requests[0]?.headers['x-api-key']).toBe(KEY);
  });

  it('a project file taking over a profile name cannot redirect its stored key', async () => {
    other = await startFakeProvider({ respond: () => ({ text: 'attacker' }) });
    world.writeConfig({
      profiles: { fast: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const elicit = await storeKeyFor('fast');
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({
        profiles: { fast: { format: 'openai', baseUrl: other.openaiBaseUrl, model: 'm' } },
      }),
    );
    // The user's endpoint wins (issue 14): the call and its key go where the user pointed them.
    const { text, isError } = await elicit.callText('delegate', { task: 'hi', profile: 'fast' });
    expect(isError).toBe(false);
    expect(text).not.toContain('attacker');
    expect(other.requests).toHaveLength(0);
    expect(fake.requests.at(-1)?.headers.authorization).toMatch(/^Bearer /);
    expect((await elicit.callText('providers', {})).text).toContain('redefines profile "fast" of');
  });
});

describe('project files and key variables', () => {
  it('a project profile may not send a key variable the user config never sends to that host', async () => {
    // Its endpoint is approved: where the call may go is settled, which key it carries is not.
    world.writeConfig(projectApprovals(world, { format: 'openai', baseUrl: fake.openaiBaseUrl }));
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({
        profiles: {
          p: {
            format: 'openai',
            baseUrl: fake.openaiBaseUrl,
            model: 'm',
            apiKeyEnv: 'OPENAI_API_KEY',
          },
        },
      }),
    );
    server = await startServer({ ...world.env, OPENAI_API_KEY: KEY });
    const { text, isError } = await server.callText('delegate', { task: 'hi' });
    expect(isError).toBe(true);
    expect(text).toMatch(
      /^Profile "p" comes from .*\.claude\/delegate\.json, which asks to send \$OPENAI_API_KEY to http:\/\/127\.0\.0\.1:\d+\. A project file may use a key variable only for a host your own config\.json sends it to/,
    );
    expect(fake.requests).toHaveLength(0);
    const providers = await server.callText('providers', {});
    expect(providers.text).toContain(
      `key from $OPENAI_API_KEY REFUSED: a project file may not send it to ${fake.url}`,
    );
  });

  it('it may when the user config sends that variable to the same host', async () => {
    world.writeConfig({
      profiles: {
        mine: {
          format: 'openai',
          baseUrl: `${fake.url}/v1`,
          model: 'x',
          apiKeyEnv: 'OPENAI_API_KEY',
        },
      },
      ...projectApprovals(world, { format: 'openai', baseUrl: fake.openaiBaseUrl }),
    });
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({
        defaultProfile: 'p',
        profiles: {
          p: {
            format: 'openai',
            baseUrl: fake.openaiBaseUrl,
            model: 'm',
            apiKeyEnv: 'OPENAI_API_KEY',
          },
        },
      }),
    );
    server = await startServer({ ...world.env, OPENAI_API_KEY: KEY });
    expect((await server.callText('delegate', { task: 'hi' })).isError).toBe(false);
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

describe('the key canary', () => {
  it('a stored key and a variable key appear nowhere but credentials.json, even when echoed back', async () => {
    const ENV_KEY = 'sk-env-canary-7a6b5c4d3e2f1a0b9c8d';
    const echo = (key: string) => ({
      kind: 'error' as const,
      status: 401,
      body: { error: { message: `invalid api key: ${key} (Bearer ${key})` } },
    });
    other = await startFakeProvider({
      respond: [{ text: 'ok' }, echo(KEY), { text: 'ok' }, echo(ENV_KEY)],
    });
    world.writeConfig({
      profiles: {
        w: { format: 'openai', baseUrl: other.openaiBaseUrl, model: 'm' },
        e: { format: 'anthropic', baseUrl: other.url, model: 'm', apiKeyEnv: 'E_KEY' },
      },
    });
    const elicit = await startElicitingServer({ ...world.env, E_KEY: ENV_KEY }, accept(KEY));
    server = elicit;
    const texts = [
      await elicit.callText('provider_key', { profile: 'w' }),
      await elicit.callText('providers', { check: true }),
      await elicit.callText('delegate', { task: 'hi', profile: 'w' }),
      await elicit.callText('delegate', { task: 'hi', profile: 'w' }),
      await elicit.callText('delegate', { task: 'hi', profile: 'e' }),
      await elicit.callText('delegate', { task: 'hi', profile: 'e' }),
      await elicit.callText('provider_set', { name: 'w', use: 'canary' }),
      await elicit.callText('usage', {}),
    ].map((result) => result.text);
    expect(texts[3]).toContain('answered HTTP 401: invalid api key: [redacted] ([redacted])');
    expect(texts[5]).toContain('answered HTTP 401: invalid api key: [redacted]');
    expect(
      other.requests.map(
        (request) => request.headers.authorization ?? request.headers['x-api-key'],
      ),
    ).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`, ENV_KEY, ENV_KEY]);
    const files = readdirSync(world.dataHome, { recursive: true, encoding: 'utf8' })
      .map((name) => join(world.dataHome, name))
      .filter((path) => statSync(path).isFile() && path !== credentialsFile());
    expect(files.length).toBeGreaterThan(1);
    for (const seen of [
      ...texts,
      elicit.stderr(),
      ...files.map((path) => readFileSync(path, 'utf8')),
    ]) {
      expect(seen).not.toContain(KEY);
      expect(seen).not.toContain(ENV_KEY);
    }
  });
});
