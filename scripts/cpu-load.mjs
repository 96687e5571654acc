#!/usr/bin/env node
// Keeps the machine busy, for running the suite under load (issue 16: its facts must hold on a
// loaded 2-core machine). Starts N CPU-bound busy loops (default: one per core) and stops them
// when it is told to (SIGTERM, SIGINT, SIGHUP), when its time is up, or when it exits.
//
//   node scripts/cpu-load.mjs [--workers N] [--seconds S] [-- command args…]
//
// With a command after `--`, it runs that command under the load and exits with its code; the
// command gets DELEGATE_TEST_TIME_SCALE=3 unless the variable is set already:
//   node scripts/cpu-load.mjs -- npx vitest run --project integration
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { setInterval } from 'node:timers';

// Each loop also checks now and then that this script still runs, so even a SIGKILL of the
// script (no handler runs) leaves no loop behind for long.
const DEFAULT_TIME_SCALE = 3;
const BUSY_LOOP = `for (let i = 1; ; i++) if (i % 5e7 === 0 && process.ppid !== ${process.pid}) process.exit(0);`;

function parseArguments(argv) {
  const options = { workers: availableParallelism(), seconds: 0, command: [] };
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === '--') {
      options.command = argv.slice(index + 1);
      break;
    }
    const value = Number(argv[index + 1]);
    if (argument === '--workers' && Number.isInteger(value) && value >= 0) options.workers = value;
    else if (argument === '--seconds' && Number.isFinite(value) && value >= 0)
      options.seconds = value;
    else {
      process.stderr.write(
        `cpu-load: unknown argument ${argument}\n` +
          'usage: node scripts/cpu-load.mjs [--workers N] [--seconds S] [-- command args…]\n',
      );
      process.exit(2);
    }
    index += 1;
  }
  return options;
}

const options = parseArguments(process.argv.slice(2));
const loops = Array.from({ length: options.workers }, () =>
  spawn(process.execPath, ['-e', BUSY_LOOP], { stdio: 'ignore' }),
);
process.stderr.write(
  `cpu-load: ${loops.length} busy loop(s) (pids ${loops.map((loop) => loop.pid).join(' ')})\n`,
);

let isStopping = false;
function stop(code) {
  if (isStopping) return;
  isStopping = true;
  for (const loop of loops) loop.kill('SIGKILL');
  process.exitCode = code;
  // Waits for the loops to be reaped, so nothing outlives the script.
  Promise.all(
    loops.map((loop) =>
      loop.exitCode !== null || loop.signalCode !== null
        ? undefined
        : new Promise((resolve) => loop.once('exit', resolve)),
    ),
  ).then(() => process.exit(code));
}

// The last resort: whatever ends this process, the loops get SIGKILL first.
process.on('exit', () => {
  for (const loop of loops) loop.kill('SIGKILL');
});
for (const [signal, number] of [
  ['SIGTERM', 15],
  ['SIGINT', 2],
  ['SIGHUP', 1],
]) {
  process.on(signal, () => stop(128 + number));
}

if (options.seconds > 0) setTimeout(() => stop(0), options.seconds * 1000);

if (options.command.length > 0) {
  const [file, ...rest] = options.command;
  // The command runs slower under load: its test windows grow (see test/helpers/timing.ts).
  const env = { ...process.env };
  env.DELEGATE_TEST_TIME_SCALE ||= String(DEFAULT_TIME_SCALE);
  process.stderr.write(`cpu-load: DELEGATE_TEST_TIME_SCALE=${env.DELEGATE_TEST_TIME_SCALE}\n`);
  const child = spawn(file, rest, { stdio: 'inherit', env });
  child.on('error', (error) => {
    process.stderr.write(`cpu-load: cannot run ${file}: ${error.message}\n`);
    stop(127);
  });
  child.on('exit', (code, signal) => stop(code ?? (signal ? 128 : 1)));
} else if (options.seconds === 0) {
  // Runs until told to stop.
  setInterval(() => undefined, 1 << 30);
}
