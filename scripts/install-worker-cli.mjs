#!/usr/bin/env node
// Installs a pinned worker CLI (Codex, Gemini) into .cache/ for the CLI-engine tests and prints
// its binary path: `node scripts/install-worker-cli.mjs codex`. Never a dependency of the plugin.
import { execFile, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const WORKER_CLIS = {
  codex: {
    packageName: '@openai/codex',
    version: '0.171.0',
    bin: 'codex',
    versionText: 'codex-cli 0.171.0',
  },
  gemini: {
    packageName: '@google/gemini-cli',
    version: '0.61.0',
    bin: 'gemini',
    versionText: '0.61.0',
  },
};
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LOCK_STALE_MS = 10 * 60_000;
const NPM_ENV_KEPT =
  /^npm_config_(registry|.*:registry|cache|userconfig|globalconfig|cafile|ca|strict_ssl|https?_proxy|proxy|noproxy)$/i;

/** Path of the pinned CLI's binary, installed into .cache/<name>-<version>/ on first use. */
export async function ensureWorkerCli(name) {
  const cli = WORKER_CLIS[name];
  if (!cli)
    throw new Error(`unknown worker CLI "${name}" (known: ${Object.keys(WORKER_CLIS).join(', ')})`);
  const dir = join(REPO_ROOT, '.cache', `${name}-cli-${cli.version}`);
  const binary = join(dir, 'node_modules', '.bin', cli.bin);
  if (await answers(binary, cli.versionText)) return binary;
  await withLock(`${dir}.lock`, async () => {
    if (await answers(binary, cli.versionText)) return;
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'package.json'),
      `${JSON.stringify({ name: `${name}-cli-cache`, private: true })}\n`,
    );
    await run(
      'npm',
      [
        'install',
        '--prefix',
        dir,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--include=optional',
        `${cli.packageName}@${cli.version}`,
      ],
      dir,
    );
    if (!(await answers(binary, cli.versionText)))
      throw new Error(`${binary} does not answer --version with ${cli.versionText}`);
  });
  return binary;
}

function childEnv() {
  const entries = Object.entries(process.env).filter(
    ([key]) => !/^npm_/i.test(key) || NPM_ENV_KEPT.test(key),
  );
  return Object.fromEntries(entries);
}

function answers(binary, versionText) {
  return new Promise((done) => {
    execFile(binary, ['--version'], { env: childEnv(), timeout: 30_000 }, (error, stdout) =>
      done(!error && stdout.includes(versionText)),
    );
  });
}

async function withLock(lockDir, action) {
  await mkdir(dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      await mkdir(lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const { mtimeMs } = await stat(lockDir).catch(() => ({ mtimeMs: Date.now() }));
      if (Date.now() - mtimeMs > LOCK_STALE_MS) await rm(lockDir, { recursive: true, force: true });
      else await new Promise((wake) => setTimeout(wake, 250));
    }
  }
  try {
    return await action();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

function run(command, args, cwd) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd,
      env: childEnv(),
      stdio: ['ignore', 2, 2],
      timeout: 5 * 60_000,
    });
    child.on('error', fail);
    child.on('close', (code, signal) =>
      code === 0
        ? done()
        : fail(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`)),
    );
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  ensureWorkerCli(process.argv[2] ?? '').then(
    (binary) => process.stdout.write(`${binary}\n`),
    (error) => {
      process.stderr.write(`install-worker-cli: ${error.message}\n`);
      process.exitCode = 1;
    },
  );
}
