// Shared measuring helpers for the bench scripts.
import { build } from 'esbuild';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  },
};

/**
 * Spawns an MCP stdio server, pipelines initialize + tools/list at once, and resolves with
 * the milliseconds from spawn to the tools/list answer and that answer's JSON, once the server
 * (killed at the answer) is gone: the kernel freeing a killed process's memory would otherwise
 * run beside the next start measured, and weigh on whichever comes after the bigger process.
 */
export function timeToToolsList(script, env = process.env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [script], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n').slice(0, -1)) {
        const message = JSON.parse(line);
        if (message.id === 2) {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          child.once('exit', () => resolve({ ms, json: JSON.stringify(message.result) }));
          child.kill('SIGKILL');
        }
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
    child.on('error', reject);
    const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send(INITIALIZE);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  });
}

/** Milliseconds from spawn to exit of a command. */
export function timeProcess(command, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
  });
}

/** An MCP server over stdio driven with raw JSON-RPC: `call(tool, args)` resolves with the result text. */
export async function startRawServer(script, env, cwd) {
  const child = spawn(process.execPath, [script], { env, cwd, stdio: ['pipe', 'pipe', 'ignore'] });
  const pending = new Map();
  let nextId = 1;
  let buffered = '';
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const message = JSON.parse(line);
      pending.get(message.id)?.(message);
      pending.delete(message.id);
    }
  });
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    call: async (name, args) =>
      (await request('tools/call', { name, arguments: args })).result.content[0].text,
    close: () => child.kill(),
  };
}

/** A test helper (`test/helpers/<name>.ts`), bundled from TypeScript so a plain .mjs bench can use it. */
export function loadTestHelper(root, temp, name) {
  return loadSource(root, temp, `test/helpers/${name}.ts`);
}

/**
 * A TypeScript module of the repository (root-relative path), bundled for a plain .mjs bench.
 * `import.meta.url` keeps naming the source file, so a module that finds files beside it (the
 * CLI installers of claude-cli.ts) still finds them from the bundle.
 */
export async function loadSource(root, temp, path) {
  return import(await bundleSource(root, temp, path));
}

/** {@link loadSource}'s bundle alone: its path, for a process of its own to import. */
export async function bundleSource(root, temp, path) {
  const module = join(temp, `${path.replace(/[/.]/g, '_')}.mjs`);
  await build({
    absWorkingDir: root,
    entryPoints: [path],
    outfile: module,
    bundle: true,
    format: 'esm',
    platform: 'node',
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(join(root, path)).href) },
    // Bundled CommonJS dependencies (fast-glob) call require(); ESM has none without this.
    banner: {
      js: "import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);",
    },
    logLevel: 'error',
  });
  return module;
}

/** The test's fake provider. */
export async function loadFakeProvider(root, temp) {
  return (await loadTestHelper(root, temp, 'fake-provider')).startFakeProvider;
}

export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@b',
};

/** The big project of the runners and tasks benches: BIG_FILES files of BIG_FILE_BYTES. */
export const BIG_FILES = 2000;
const BIG_FILE_BYTES = 10_000;

/**
 * BIG_FILES files of BIG_FILE_BYTES in 20 folders: lines of pseudo-random lowercase words from a
 * fixed seed (deterministic; text that zlib packs to roughly 60 %, as source roughly does).
 */
export function writeBigProjectFiles(dir) {
  let state = 0x2545f491;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  let total = 0;
  for (let index = 0; index < BIG_FILES; index += 1) {
    const folder = join(dir, `d${String(index % 20).padStart(2, '0')}`);
    if (index < 20) mkdirSync(folder);
    let text = '';
    while (text.length < BIG_FILE_BYTES) {
      let word = '';
      for (let length = 2 + (next() % 8); length > 0; length -= 1)
        word += String.fromCharCode(97 + (next() % 26));
      text += next() % 10 === 0 ? `${word}\n` : `${word} `;
    }
    text = text.slice(0, BIG_FILE_BYTES);
    writeFileSync(join(folder, `f${index}.txt`), text);
    total += text.length;
  }
  return total;
}

/**
 * A git repository at `<temp>/project` holding one committed README (and what `fill` writes
 * there); returns its path.
 */
export function benchProject(temp, fill) {
  const project = join(temp, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'README.md'), 'bench\n');
  fill?.(project);
  const env = { ...process.env, ...GIT_IDENTITY };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-qm', 'init'],
  ])
    execFileSync('git', args, { cwd: project, env });
  return project;
}

/**
 * A real server for `project` whose data home (`<temp>/data`) holds one worker profile `w`
 * (openai format at `baseUrl`, local); `profile` adds to it. `NODE_OPTIONS` from
 * `BENCH_NODE_OPTIONS`. Returns the server, its data home and its environment.
 */
export async function startBenchServer(root, temp, project, baseUrl, profile = {}) {
  const dataHome = join(temp, 'data');
  mkdirSync(dataHome);
  const w = { format: 'openai', baseUrl, model: 'm', local: true, ...profile };
  writeFileSync(join(dataHome, 'config.json'), JSON.stringify({ profiles: { w } }));
  const env = {
    PATH: process.env.PATH,
    HOME: temp,
    DELEGATE_HOME: dataHome,
    CLAUDE_PROJECT_DIR: project,
    ...GIT_IDENTITY,
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  };
  const server = await startRawServer(join(root, 'plugin', 'dist', 'server.mjs'), env, project);
  return { server, dataHome, env };
}

const TERMINAL = ['done', 'failed', 'cancelled', 'timeout', 'lost'];

/** Polls `task_status` until task `id` has ended; returns its status line. */
export async function waitUntilEnded(server, id) {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const line = await server.call('task_status', { task_ids: [id] });
    if (TERMINAL.includes(line.split(/[ :]/)[1])) return line;
  }
}
