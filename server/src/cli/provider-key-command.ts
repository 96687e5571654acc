import { keyPromptText, keyTarget, storeEnteredKey } from '../profiles/enter-key.ts';
import { CLI_WORDING, inCliWords } from '../util/wording.ts';
import { UserError } from '../util/user-error.ts';
import type { CliCommand, CliContext } from './cli-command.ts';

const CONTROL = {
  enter: ['\r', '\n'],
  interrupt: '\u0003',
  end: '\u0004',
  erase: ['\u007f', '\b'],
};

/**
 * `delegate provider-key <profile>`: the terminal way to enter a key when the client cannot
 * show a form. On a terminal the key is read with echo off; otherwise it is read from stdin
 * (`printf %s "$KEY" | delegate provider-key fast`), so scripts can store keys too.
 */
export const providerKeyCommand: CliCommand = {
  usage: 'provider-key <profile>',
  summary: "store a profile's API key (read without echo), bound to its host",
  help: `Reads a profile's API key from the terminal without echo and stores it in credentials.json, bound to the
profile's host (it is never sent elsewhere). On a copilot profile it runs the GitHub login instead.`,
  async run(args, context) {
    const [name, ...rest] = args;
    if (!name || rest.length > 0) {
      context.stderr.write(
        'Usage: delegate provider-key <profile>  (the key is read from the terminal or stdin, never an argument)\n',
      );
      return 2;
    }
    const target = keyTarget(context.dataHome, context.projectDir, context.env, name, CLI_WORDING);
    const input = context.stdin.isTTY
      ? await readHidden(
          context,
          `${inCliWords(keyPromptText(target, context.dataHome))}\nKey (input hidden): `,
        )
      : await readAll(context.stdin);
    context.stdout.write(
      `${inCliWords(await storeEnteredKey(context.dataHome, target, input, context.now()))}\n`,
    );
    return 0;
  },
};

async function readAll(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads one line in raw mode, echoing nothing; Ctrl-C or Ctrl-D on an empty line cancels. */
function readHidden(context: CliContext, prompt: string): Promise<string> {
  const { stdin, stderr } = context;
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (cancelled: boolean) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (cancelled) reject(new UserError('Cancelled; nothing was stored.'));
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (CONTROL.enter.includes(char)) return finish(false);
        if (char === CONTROL.interrupt) return finish(true);
        if (char === CONTROL.end) return finish(value === '');
        if (CONTROL.erase.includes(char)) value = value.slice(0, -1);
        else value += char;
      }
      return undefined;
    };
    stdin.on('data', onData);
  });
}
