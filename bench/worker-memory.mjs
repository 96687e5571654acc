// Memory of task workers waiting on their model, beside bare Node processes waiting the same
// way, measured in the same run: resident set size (VmRSS from /proc) of each process.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { benchProject, loadFakeProvider, median, startBenchServer } from './lib.mjs';

const WORKERS = 5;
/** The V8 flags the server starts task workers with (WORKER_NODE_FLAGS in spawn-worker.ts). */
const WORKER_FLAGS = ['--optimize-for-size'];
const SETTLE_MS = 1500;
/** A later reading: V8's memory reducer first runs about 8 s after start-up, once a process idles. */
const SETTLED_MS = 12_000;

/** VmRSS of a process in MB, or undefined once it is gone. */
function rssMb(pid) {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Anonymous (private, not file-backed) memory of a process in MB, from smaps_rollup. */
function anonMb(pid) {
  try {
    const kb = /^Anonymous:\s+(\d+) kB/m.exec(
      readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'),
    )?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The task workers whose environment names this data home: pid and task id. */
function workerPids(dataHome) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!command.includes('task-worker.mjs')) continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const id = env.find((line) => line.startsWith('DELEGATE_TASK_ID='))?.slice(17);
      if (env.includes(`DELEGATE_HOME=${dataHome}`)) pids.push({ pid: Number(entry), id });
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The Node builtins the task worker's bundle can load: every `node:` or bare builtin name that
 * dist/task-worker.mjs and the modules it imports (statically or by dynamic import) name.
 */
function workerBuiltins(root) {
  const builtins = new Set();
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, name] of text.matchAll(/(?:from|import|require)\s*\(?\s*["']([^"']+)["']/g)) {
      if (name.startsWith('.')) visit(join(dirname(file), name));
      else if (name.startsWith('node:') || builtinModules.includes(name))
        builtins.add(name.replace(/^node:/, ''));
    }
  };
  visit(join(root, 'plugin', 'dist', 'task-worker.mjs'));
  return [...builtins].sort();
}

/** `count` bare Node processes running `code`: their RSS and anonymous memory after they settle. */
async function bareMemory(code, count, flags = []) {
  const children = Array.from({ length: count }, () =>
    // The workers' environment, not the bench shell's (NODE_EXTRA_CA_CERTS alone adds ~2 MB).
    spawn(process.execPath, [...flags, '-e', code], {
      stdio: 'ignore',
      env: { PATH: process.env.PATH },
    }),
  );
  try {
    await sleep(SETTLE_MS);
    const read = (measure) =>
      children.map((child) => measure(child.pid)).filter((mb) => mb !== undefined);
    return { rss: read(rssMb), anon: read(anonMb) };
  } finally {
    for (const child of children) child.kill('SIGKILL');
  }
}

export async function benchWorkerMemory(root) {
  if (process.platform !== 'linux') {
    return {
      title: 'Memory of waiting task workers',
      note: 'Measured from /proc: Linux only.',
      rows: [],
    };
  }
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-memory-'));
  let server;
  let fake;
  try {
    const startFakeProvider = await loadFakeProvider(root, temp);
    const project = benchProject(temp);
    let requests = 0;
    // Every model request is answered with headers and then nothing: the worker waits.
    fake = await startFakeProvider({
      respond: () => {
        requests += 1;
        return { kind: 'hang' };
      },
    });
    let dataHome;
    ({ server, dataHome } = await startBenchServer(root, temp, project, fake.openaiBaseUrl, {
      pool: WORKERS,
      idleTimeoutS: 600,
    }));
    const ids = [];
    for (let index = 0; index < WORKERS; index += 1) {
      const text = await server.call('task_start', { task: `bench memory task ${index}` });
      ids.push(/t_[a-z0-9]{6}/.exec(text)[0]);
    }
    while (requests < WORKERS) await sleep(10);
    await sleep(SETTLE_MS);
    const found = workerPids(dataHome);
    const waiting = found.filter((worker) => ids.includes(worker.id));
    const workers = waiting.map((worker) => rssMb(worker.pid)).filter((mb) => mb !== undefined);
    const workersAnon = waiting
      .map((worker) => anonMb(worker.pid))
      .filter((mb) => mb !== undefined);
    // The server's standby: loaded for the next start, waiting on its stdin (no task yet).
    const standby = found
      .filter((worker) => !ids.includes(worker.id))
      .map((worker) => rssMb(worker.pid))
      .filter((mb) => mb !== undefined);
    // The same workers still waiting, once V8 has given back what start-up left behind.
    await sleep(SETTLED_MS - SETTLE_MS);
    const settled = waiting.map((worker) => rssMb(worker.pid)).filter((mb) => mb !== undefined);
    // The same, on a profile priced from the genai-prices table (not `local`): a worker that
    // spends money loads the table before its first request, to cap the call by its budget.
    const configFile = join(dataHome, 'config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8'));
    config.profiles.priced = { ...config.profiles.w, local: false };
    writeFileSync(configFile, JSON.stringify(config));
    const pricedIds = [];
    for (let index = 0; index < WORKERS; index += 1) {
      const text = await server.call('task_start', {
        task: `bench memory priced task ${index}`,
        profile: 'priced',
      });
      pricedIds.push(/t_[a-z0-9]{6}/.exec(text)[0]);
    }
    while (requests < 2 * WORKERS) await sleep(10);
    await sleep(SETTLE_MS);
    const pricedWorkers = workerPids(dataHome).filter((worker) => pricedIds.includes(worker.id));
    const priced = pricedWorkers
      .map((worker) => rssMb(worker.pid))
      .filter((mb) => mb !== undefined);
    await sleep(SETTLED_MS - SETTLE_MS);
    const pricedSettled = pricedWorkers
      .map((worker) => rssMb(worker.pid))
      .filter((mb) => mb !== undefined);
    for (const id of pricedIds) await server.call('task_cancel', { task_id: id });
    const fakeUrl = `${fake.openaiBaseUrl}/chat/completions`;
    const { rss: idle, anon: idleAnon } = await bareMemory('setInterval(() => {}, 1e9)', WORKERS);
    // The floor of any design with a Node process per waiting task: the builtins it needs.
    const builtins = workerBuiltins(root);
    const { rss: withBuiltins } = await bareMemory(
      `for (const name of ${JSON.stringify(builtins)}) require(name); setInterval(() => {}, 1e9)`,
      WORKERS,
      WORKER_FLAGS,
    );
    const { rss: fetching } = await bareMemory(
      `fetch(${JSON.stringify(fakeUrl)}, { method: 'POST', headers: { 'content-type': 'application/json' }, ` +
        `body: JSON.stringify({ model: 'm', stream: true, messages: [] }) }).then((r) => r.text())`,
      WORKERS,
    );
    for (const id of ids) await server.call('task_cancel', { task_id: id });
    const worker50 = median(workers);
    const idle50 = median(idle);
    return {
      title: 'Memory of waiting task workers',
      note:
        `${WORKERS} tasks started through a real \`dist/server.mjs\`, each worker waiting on a model ` +
        `request the fake holds open (headers sent, no body); RSS (VmRSS) read ${SETTLE_MS / 1000} s ` +
        `after the last request arrived and again ${SETTLED_MS / 1000} s after it; then ${WORKERS} more on a priced profile; and the server's standby worker (loaded for its next start, waiting on its stdin). Beside them, in the same run, ${WORKERS} bare Node processes ` +
        `idle on a timer, and ${WORKERS} waiting on the same held request with \`fetch\`.`,
      rows: [
        [
          `RSS of a task worker waiting on its model (median of ${workers.length})`,
          `${worker50.toFixed(1)} MB = ${(worker50 / idle50).toFixed(2)}× bare idle Node`,
          '≤ 1.2× bare idle Node',
        ],
        [
          `the same workers ${SETTLED_MS / 1000} s after the last request, still waiting (median)`,
          `${median(settled).toFixed(1)} MB = ${(median(settled) / idle50).toFixed(2)}× bare idle Node`,
          'reference',
        ],
        [
          `the same on a priced profile (not \`local\`: its price looked up in the genai-prices table before the first request, to cap the call by its budget; median of ${priced.length})`,
          `${median(priced).toFixed(1)} MB = ${(median(priced) / idle50).toFixed(2)}× bare idle Node`,
          '≤ 1.2× bare idle Node',
        ],
        [
          `the same priced workers ${SETTLED_MS / 1000} s after the last request, still waiting (median)`,
          `${median(pricedSettled).toFixed(1)} MB = ${(median(pricedSettled) / idle50).toFixed(2)}× bare idle Node`,
          'reference',
        ],
        [
          'RSS of the server’s standby worker (loaded, waiting for its start)',
          standby.length === 1
            ? `${standby[0].toFixed(1)} MB = ${(standby[0] / idle50).toFixed(2)}× bare idle Node`
            : `${standby.length} found`,
          'reference',
        ],
        ['RSS of a bare idle Node (median)', `${idle50.toFixed(1)} MB`, 'baseline'],
        [
          'private memory of a waiting task worker, bare idle Node (median Anonymous of smaps_rollup: RSS less the pages of the node binary and libraries, shared by all)',
          `${median(workersAnon).toFixed(1)} MB, ${median(idleAnon).toFixed(1)} MB`,
          'reference',
        ],
        [
          `RSS of a bare idle Node that has loaded the ${builtins.length} Node builtins the worker's bundle names, with the worker's V8 flags (median): the floor of a Node process per waiting task`,
          `${median(withBuiltins).toFixed(1)} MB = ${(median(withBuiltins) / idle50).toFixed(2)}× bare idle Node`,
          'reference',
        ],
        [
          'RSS of a bare Node waiting on the same request with `fetch` (median)',
          `${median(fetching).toFixed(1)} MB = ${(median(fetching) / idle50).toFixed(2)}× bare idle Node`,
          'reference',
        ],
      ],
    };
  } finally {
    server?.close();
    await fake?.close();
    rmSync(temp, { recursive: true, force: true });
  }
}
