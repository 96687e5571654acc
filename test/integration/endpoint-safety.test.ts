import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect } from 'vitest';
import { discoverLocalServer } from '../../server/src/profiles/discover-local.ts';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { taskTest as it } from '../helpers/task-world.ts';
import { scaledMs } from '../helpers/timing.ts';

it.override('repository', null);

let redirector: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (redirector ? redirector.close(resolve) : resolve(undefined)));
  redirector = undefined;
});

const profile = (baseUrl: string) => ({ format: 'openai', baseUrl, model: 'm' });

/** Base URLs that must never be called, by how they spell the address. */
const REFUSED: Record<string, string> = {
  literal: 'http://169.254.169.254/v1',
  decimal: 'http://2852039166/v1',
  hex: 'http://0xA9FEA9FE/v1',
  octal: 'http://0251.0376.0251.0376/v1',
  mapped: 'http://[::ffff:169.254.169.254]/v1',
  linklocal4: 'http://169.254.10.20:11434/v1',
  linklocal6: 'http://[fe80::1]:11434/v1',
  aws6: 'http://[fd00:ec2::254]/v1',
  alibaba: 'http://100.100.100.200/v1',
  gcpname: 'http://metadata.google.internal/v1',
  // Names whose resolution the test controls (DELEGATE_HOSTS_FOR_TEST), no DNS involved.
  resolves: 'http://evil.test/v1',
  mixed: 'http://mixed.test/v1',
};
const HOSTS = 'evil.test=169.254.169.254,mixed.test=127.0.0.1,mixed.test=169.254.169.254';

async function startRedirector(location: string): Promise<string> {
  redirector = createServer((_, res) => res.writeHead(307, { location }).end());
  await new Promise<void>((resolve) => redirector!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/v1`;
}

describe('endpoint safety, through the built server', () => {
  it('refuses metadata and link-local endpoints in every spelling, at request time', async ({
    world,
    server: servers,
  }) => {
    world.writeConfig({
      profiles: Object.fromEntries(Object.entries(REFUSED).map(([n, url]) => [n, profile(url)])),
    });
    const server = await servers.start({ ...world.env, DELEGATE_HOSTS_FOR_TEST: HOSTS });
    for (const name of Object.keys(REFUSED)) {
      const started = Date.now();
      const { text, isError } = await server.callText('delegate', { task: 'hi', profile: name });
      expect(isError, name).toBe(true);
      expect(text, name).toMatch(/^Refused to connect to .*never link-local or cloud-metadata/);
      expect(Date.now() - started, name).toBeLessThan(scaledMs(2_000));
    }
    const ledger = readLedger(world.dataHome);
    expect(ledger).toHaveLength(Object.keys(REFUSED).length);
    expect(ledger.every((record) => record.outcome === 'error')).toBe(true);
    const { text } = await server.callText('providers', { check: true });
    expect(text.match(/check: FAILED: Refused to connect/g)).toHaveLength(
      Object.keys(REFUSED).length,
    );
    expect(text).toContain('evil.test resolves to 169.254.169.254, the cloud metadata address');
    expect(text).toContain('mixed.test resolves to 169.254.169.254');
  });

  it('connects a name to the address its checked lookup gave, and loopback works', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ respond: [{ text: 'hello from loopback' }] });
    const port = new URL(fake.url).port;
    world.writeConfig({ profiles: { w: profile(`http://models.test:${port}/v1`) } });
    const server = await servers.start({
      ...world.env,
      DELEGATE_HOSTS_FOR_TEST: 'models.test=127.0.0.1',
    });
    const { text, isError } = await server.callText('delegate', { task: 'hi' });
    expect(isError).toBe(false);
    expect(text).toContain('hello from loopback');
    expect(fake.requests[0]?.headers.host).toBe(`models.test:${port}`);
  });

  it('refuses a redirect from a 127.0.0.1 server to the metadata address', async ({
    world,
    server: servers,
  }) => {
    const baseUrl = await startRedirector('http://169.254.169.254/latest/meta-data/iam/');
    world.writeConfig({ profiles: { w: profile(baseUrl) } });
    const server = await servers.start(world.env);
    const { text, isError } = await server.callText('delegate', { task: 'hi' });
    expect(isError).toBe(true);
    expect(text).toContain(
      `${baseUrl}/chat/completions redirected (HTTP 307) to http://169.254.169.254/latest/meta-data/iam/, which is refused`,
    );
  });

  it('follows no redirect at all, so a key never travels to the redirect target', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ respond: [{ text: 'should not be reached' }] });
    const baseUrl = await startRedirector(`${fake.openaiBaseUrl}/chat/completions`);
    world.writeConfig({ profiles: { w: { ...profile(baseUrl), apiKeyEnv: 'W_KEY' } } });
    const server = await servers.start({ ...world.env, W_KEY: 'sk-canary-redirect-0123456789' });
    const { text, isError } = await server.callText('delegate', { task: 'hi' });
    expect(isError).toBe(true);
    expect(text).toMatch(/answered with a redirect \(HTTP 307\) to .* Redirects are not followed/);
    expect(fake.requests).toHaveLength(0);
    expect(text).not.toContain('sk-canary');
  });
});

describe('endpoint safety in local discovery', () => {
  it('skips a candidate that resolves to a metadata address and finds the loopback one', async ({
    provider,
  }) => {
    const fake = await provider.start({ models: ['qwen'] });
    const port = new URL(fake.url).port;
    const previous = process.env.DELEGATE_HOSTS_FOR_TEST;
    process.env.DELEGATE_HOSTS_FOR_TEST = 'meta.test=169.254.169.254,local.test=127.0.0.1';
    try {
      const started = Date.now();
      const found = await discoverLocalServer({
        DELEGATE_DISCOVERY_URLS_FOR_TEST: `Meta=http://meta.test/v1,Literal=http://169.254.169.254/v1,Ollama=http://local.test:${port}/v1`,
      });
      expect(found).toMatchObject({ name: 'Ollama', models: ['qwen'] });
      expect(Date.now() - started).toBeLessThan(scaledMs(700));
    } finally {
      if (previous === undefined) delete process.env.DELEGATE_HOSTS_FOR_TEST;
      else process.env.DELEGATE_HOSTS_FOR_TEST = previous;
    }
  });
});
