import { runDelegation, type DelegateInput } from '../delegation/run-delegation.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand, CliContext } from './cli-command.ts';

const USAGE =
  'run [--profile <name>] [--write-to <file>] [--max-output-tokens <n>] <task|-> [<file|glob>…]';
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * `delegate run`: the `delegate` tool from a terminal — the files go from disk to the worker
 * and the answer (plus the usage line) comes back on stdout. `-` reads the task from stdin. A
 * progress indicator shows on stderr when it is a terminal, never in pipes or logs.
 */
export const runCommand: CliCommand = {
  usage: USAGE,
  summary: 'one-shot delegation from a terminal: task and files to a worker, answer to stdout',
  help: `Sends the task and the files (paths or globs, read from disk) to a worker model and prints its answer on
stdout, then the usage line. "-" reads the task from stdin.

Options:
  --profile <name>            the profile to call (default: the configured default)
  --write-to <file>           write the answer to a file instead of stdout
  --max-output-tokens <n>     cap the answer's length`,
  async run(args, context) {
    const parsed = parseCli(
      args,
      {
        profile: { type: 'string' },
        'write-to': { type: 'string' },
        'max-output-tokens': { type: 'string' },
      },
      USAGE,
      context,
    );
    if (!parsed) return 2;
    const [taskArgument, ...files] = parsed.positionals;
    if (!taskArgument) return usageError(context, 'say what the worker should do.', USAGE);
    const maxTokens = parsed.values['max-output-tokens'];
    if (maxTokens !== undefined && !/^[1-9]\d*$/.test(maxTokens)) {
      return usageError(context, `--max-output-tokens takes a number, not "${maxTokens}".`, USAGE);
    }
    const task = taskArgument === '-' ? (await readAll(context.stdin)).trim() : taskArgument;
    if (!task) return usageError(context, 'the task read from stdin is empty.', USAGE);
    const input: DelegateInput = {
      task,
      files,
      ...(parsed.values.profile ? { profile: parsed.values.profile } : {}),
      ...(parsed.values['write-to'] ? { writeTo: parsed.values['write-to'] } : {}),
      ...(maxTokens ? { maxOutputTokens: Number(maxTokens) } : {}),
    };
    return delegateWithProgress(input, context);
  },
};

function delegateWithProgress(input: DelegateInput, context: CliContext): Promise<number> {
  return printAnswer(context, 'the call was cancelled', (signal, waiting) =>
    runDelegation(input, { ...context }, signal, waiting),
  );
}

/**
 * Prints what `work` answers on stdout (exit 0), a spinner on a terminal meanwhile; Ctrl-C
 * aborts it and says `interrupted; <what>` (exit 130).
 */
export async function printAnswer(
  context: CliContext,
  interrupted: string,
  work: (signal: AbortSignal, waiting: (what: string | undefined) => void) => Promise<string>,
): Promise<number> {
  const abort = new AbortController();
  const onInterrupt = () => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onInterrupt);
  const progress = showProgress(context);
  const stopProgress = progress.stop;
  try {
    const answer = await work(abort.signal, progress.waiting);
    stopProgress();
    context.stdout.write(`${answer}\n`);
    return 0;
  } catch (error) {
    stopProgress();
    if (!abort.signal.aborted) throw error;
    context.stderr.write(`delegate: interrupted; ${interrupted}.\n`);
    return 130;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

/**
 * A spinner with the seconds waited, on a terminal; `waiting` names a full pool in its place
 * (off a terminal: one line on stderr when such a wait begins). `stop` clears it.
 */
function showProgress(context: CliContext): {
  stop: () => void;
  waiting: (what: string | undefined) => void;
} {
  const stderr = context.stderr as NodeJS.WriteStream;
  let waitingFor: string | undefined;
  if (!stderr.isTTY) {
    return {
      stop: () => undefined,
      waiting: (what) => {
        if (what !== undefined && waitingFor === undefined) stderr.write(`delegate: ${what}\n`);
        waitingFor = what;
      },
    };
  }
  const started = Date.now();
  let frame = 0;
  const draw = () => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const what = waitingFor ?? `waiting for the worker… ${seconds} s`;
    stderr.write(`\r${FRAMES[frame % FRAMES.length]} ${what}\x1b[K`);
    frame += 1;
  };
  draw();
  const timer = setInterval(draw, 100);
  return {
    stop: () => {
      clearInterval(timer);
      stderr.write('\r\x1b[K');
    },
    waiting: (what) => (waitingFor = what),
  };
}

export async function readAll(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
