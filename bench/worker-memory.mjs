// Memory of tasks waiting on their model (all on the server's task host), beside bare Node
// processes waiting the same way, measured in the same run: resident set size (VmRSS from /proc).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { benchProject, loadFakeProvider, median, startBenchServer } from './lib.mjs';

/** Tasks waiting at the first reading, at the second, and priced ones added after. */
const FEW = 5;
const MANY = 20;
const PRICED = 5;
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

/** The pid of the process running task `id` (its host), from its job.json. */
function workerPidOf(dataHome, id) {
  try {
    return JSON.parse(readFileSync(join(dataHome, 'jobs', id, 'job.json'), 'utf8')).worker?.pid;
  } catch {
    return undefined;
  }
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

/** Starts `count` tasks, named `label` and a number, on `profile`; their ids. */
async function startTasks(server, label, count, profile) {
  const ids = [];
  for (let index = 0; index < count; index += 1) {
    const text = await server.call('task_start', {
      task: `${label} ${index}`,
      ...(profile ? { profile } : {}),
    });
    ids.push(/t_[a-z0-9]{6}/.exec(text)[0]);
  }
  return ids;
}

/** Memory as "X MB = R× n bare idle Nodes": a process measured against one bare Node per task. */
function against(mb, tasks, idle) {
  const ratio = mb / (tasks * idle);
  return `${mb.toFixed(1)} MB = ${ratio.toFixed(2)}× ${tasks} bare idle Node${tasks === 1 ? '' : 's'} (${(mb / tasks).toFixed(1)} MB a task)`;
}

export async function benchWorkerMemory(root) {
  if (process.platform !== 'linux') {
    return {
      title: 'Memory of waiting tasks',
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
    // Every model request is answered with headers and then nothing: the task waits.
    fake = await startFakeProvider({
      respond: () => {
        requests += 1;
        return { kind: 'hang' };
      },
    });
    let dataHome;
    ({ server, dataHome } = await startBenchServer(root, temp, project, fake.openaiBaseUrl, {
      pool: MANY + PRICED,
      idleTimeoutS: 600,
    }));
    const waitForRequests = async (count) => {
      while (requests < count) await sleep(10);
      await sleep(SETTLE_MS);
    };
    const first = await startTasks(server, 'bench memory task', FEW);
    await waitForRequests(FEW);
    const host = workerPidOf(dataHome, first[0]);
    const few = rssMb(host);
    const fewAnon = anonMb(host);
    const ids = [...first, ...(await startTasks(server, 'bench memory later task', MANY - FEW))];
    const hosts = new Set(ids.map((id) => workerPidOf(dataHome, id)));
    await waitForRequests(MANY);
    const many = rssMb(host);
    const manyAnon = anonMb(host);
    // The same host still waiting, once V8 has given back what start-up left behind.
    await sleep(SETTLED_MS - SETTLE_MS);
    const manySettled = rssMb(host);
    // Tasks on a profile priced from the genai-prices table (not `local`): a task that spends
    // money has the table loaded before its first request, to cap the call by its budget.
    const configFile = join(dataHome, 'config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8'));
    config.profiles.priced = { ...config.profiles.w, local: false };
    writeFileSync(configFile, JSON.stringify(config));
    const pricedIds = await startTasks(server, 'bench memory priced task', PRICED, 'priced');
    for (const id of pricedIds) hosts.add(workerPidOf(dataHome, id));
    await waitForRequests(MANY + PRICED);
    const priced = rssMb(host);
    for (const id of [...ids, ...pricedIds]) await server.call('task_cancel', { task_id: id });
    await sleep(SETTLE_MS);
    // Loaded, its tasks gone: what the next start finds.
    const emptied = rssMb(host);
    const fakeUrl = `${fake.openaiBaseUrl}/chat/completions`;
    const { rss: idle, anon: idleAnon } = await bareMemory('setInterval(() => {}, 1e9)', FEW);
    // The floor of any design with a Node process per waiting task: the builtins it needs.
    const builtins = workerBuiltins(root);
    const { rss: withBuiltins } = await bareMemory(
      `for (const name of ${JSON.stringify(builtins)}) require(name); setInterval(() => {}, 1e9)`,
      FEW,
      WORKER_FLAGS,
    );
    const { rss: fetching } = await bareMemory(
      `fetch(${JSON.stringify(fakeUrl)}, { method: 'POST', headers: { 'content-type': 'application/json' }, ` +
        `body: JSON.stringify({ model: 'm', stream: true, messages: [] }) }).then((r) => r.text())`,
      FEW,
    );
    const idle50 = median(idle);
    return {
      title: 'Memory of waiting tasks',
      note:
        `Tasks started through a real \`dist/server.mjs\`, each waiting on a model request the fake ` +
        `holds open (headers sent, no body). A server runs all its tasks on one task host process ` +
        `(${hosts.size === 1 ? 'one host here, as expected' : `${hosts.size} processes here`}). Its RSS (VmRSS) ` +
        `is read ${SETTLE_MS / 1000} s after the last request arrived with ${FEW} tasks waiting, then with ${MANY}, ` +
        `again ${SETTLED_MS / 1000} s later, then with ${PRICED} more on a priced profile, and once all were cancelled. ` +
        `Beside it, in the same run, ${FEW} bare Node processes idle on a timer, and ${FEW} waiting on the ` +
        `same held request with \`fetch\`: the floor of a design with one Node process per waiting task is ` +
        `one bare Node per task.`,
      rows: [
        [
          `RSS of the task host with ${FEW} tasks waiting on their model, against ${FEW} bare idle Nodes`,
          against(few, FEW, idle50),
          '≤ 1.2× (one bare idle Node per waiting task)',
        ],
        [
          `the same host with ${MANY} tasks waiting`,
          against(many, MANY, idle50),
          '≤ 1.2× (one bare idle Node per waiting task)',
        ],
        [
          `each waiting task beyond the first ${FEW} (RSS added from ${FEW} to ${MANY}, per task)`,
          `${((many - few) / (MANY - FEW)).toFixed(2)} MB = ${((many - few) / (MANY - FEW) / idle50).toFixed(3)}× a bare idle Node`,
          'reference',
        ],
        [
          `the host with ${MANY} tasks waiting, ${SETTLED_MS / 1000} s after the last request`,
          against(manySettled, MANY, idle50),
          'reference',
        ],
        [
          `the host with ${PRICED} more on a priced profile (not \`local\`: its price looked up in the genai-prices table before the first request, to cap the call by its budget)`,
          against(priced, MANY + PRICED, idle50),
          '≤ 1.2× (one bare idle Node per waiting task)',
        ],
        [
          'RSS of the host once its tasks were cancelled (loaded, waiting for the next start)',
          `${emptied.toFixed(1)} MB = ${(emptied / idle50).toFixed(2)}× a bare idle Node`,
          'reference',
        ],
        ['RSS of a bare idle Node (median)', `${idle50.toFixed(1)} MB`, 'baseline'],
        [
          `private memory of the host with ${FEW} and ${MANY} tasks waiting, bare idle Node (Anonymous of smaps_rollup: RSS less the pages of the node binary and libraries, shared by all)`,
          `${fewAnon.toFixed(1)} MB, ${manyAnon.toFixed(1)} MB, ${median(idleAnon).toFixed(1)} MB`,
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
