/**
 * Entry of the `delegate` CLI (dist/cli.mjs, launched by bin/delegate): one table of
 * subcommands, each a small module loaded only when it runs.
 */
import { resolveDataHome, resolveProjectDir } from '../config/paths.ts';
import { resolvePluginRoot } from '../config/plugin-root.ts';
import { describeFileSystemError } from '../util/file-system-error.ts';
import { errorMessage, UserError } from '../util/user-error.ts';
import { VERSION } from '../util/version.ts';
import { inCliWords } from '../util/wording.ts';
import type { CliCommand, CliContext } from './cli-command.ts';

// In the order a user needs them (--help lists them so): first setting up and one-shot work,
// then background tasks as they run (list, wait, read, stop, clean up), then the rest.
const COMMANDS: Record<string, () => Promise<CliCommand>> = {
  doctor: async () => (await import('./doctor-command.ts')).doctorCommand,
  // On a copilot profile, provider-key runs the GitHub login instead of reading a key.
  'provider-key': async () =>
    (await import('./copilot-login-command.ts')).withCopilotLogin(
      (await import('./provider-key-command.ts')).providerKeyCommand,
    ),
  'copilot-login': async () => (await import('./copilot-login-command.ts')).copilotLoginCommand,
  'approve-project': async () =>
    (await import('./approve-project-command.ts')).approveProjectCommand,
  statusline: async () => (await import('./statusline-command.ts')).statuslineCommand,
  run: async () => (await import('./run-command.ts')).runCommand,
  explore: async () => (await import('./explore-command.ts')).exploreCommand,
  start: async () => (await import('./start-command.ts')).startCommand,
  tasks: async () => (await import('./tasks-command.ts')).tasksCommand,
  wait: async () => (await import('./wait-command.ts')).waitCommand,
  result: async () => (await import('./result-command.ts')).resultCommand,
  cancel: async () => (await import('./cancel-command.ts')).cancelCommand,
  cleanup: async () => (await import('./cleanup-command.ts')).cleanupCommand,
  watch: async () => (await import('./watch-command.ts')).watchCommand,
  usage: async () => (await import('./usage-command.ts')).usageCommand,
  scoreboard: async () => (await import('./scoreboard-command.ts')).scoreboardCommand,
  subagent: async () => (await import('./subagent-command.ts')).subagentCommand,
  uninstall: async () => (await import('./uninstall-command.ts')).uninstallCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  const context: CliContext = {
    env: process.env,
    dataHome: resolveDataHome(process.env),
    projectDir: resolveProjectDir(process.env, process.cwd()),
    pluginRoot: resolvePluginRoot(process.env, import.meta.url),
    stdin: process.stdin,
    stderr: process.stderr,
    stdout: process.stdout,
    now: () => new Date(),
  };
  if (name === '--version' || name === '-V') {
    context.stdout.write(`delegate ${VERSION}\n`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    (name ? context.stdout : context.stderr).write(await usage());
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    context.stderr.write(`delegate: unknown command "${name}".\n${await usage()}`);
    return 2;
  }
  const command = await load();
  if (asksForHelp(args)) {
    context.stdout.write(
      `Usage: delegate ${command.usage}\n\n${command.summary}.\n\n${command.help}\n`,
    );
    return 0;
  }
  return command.run(args, context);
}

/** `--help` or `-h` before any `--` (after it, they are a task's text). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

async function usage(): Promise<string> {
  const lines = await Promise.all(
    Object.values(COMMANDS).map(async (load) => {
      const command = await load();
      return `  delegate ${command.usage}\n      ${command.summary}`;
    }),
  );
  return (
    `delegate ${VERSION}: hand work to other models from Claude Code or a terminal.\n\n` +
    `Usage:\n${lines.join('\n')}\n\n` +
    'delegate <command> --help shows a command in detail; delegate --version, its version.\n'
  );
}

// A reader that stops early (`delegate tasks | head -1`) closes the pipe: the rest of the output
// has nowhere to go, which is no error of ours. End quietly, for every command.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const fileProblem = describeFileSystemError(error, resolveDataHome(process.env));
    process.stderr.write(
      error instanceof UserError
        ? `delegate: ${inCliWords(error.message)}\n`
        : fileProblem
          ? `delegate: ${fileProblem}\n`
          : `delegate: internal error: ${(error as Error).stack ?? errorMessage(error)}\n`,
    );
    process.exitCode = 1;
  },
);
