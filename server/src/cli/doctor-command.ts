import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../profiles/load-config.ts';
import { describeProviders, runnerFactsText, runnerWhere } from '../calls/describe-providers.ts';
import { checkRunner, runnerAddress, runnerSandbox } from '../runners/check-runner.ts';
import { describeStatusLineSetup } from './install-statusline.ts';
import { errorMessage, UserError } from '../util/user-error.ts';
import { plural } from '../util/plural.ts';
import { inCliWords } from '../util/wording.ts';
import type { CliCommand, CliContext } from './cli-command.ts';

type Level = 'ok' | 'warn' | 'FAIL';
interface Check {
  level: Level;
  what: string;
  detail?: string;
  /**
   * The error behind a failed check. Several checks read the same files, so one broken file
   * fails each of them with the same error: it is printed once, under the first.
   */
  cause?: string;
}

const MIN_NODE_MAJOR = 20;
/** Phrases of `providers` that mean a profile cannot be used as it stands. */
const PROFILE_PROBLEM = /check: FAILED|NOT SET|REFUSED|NOT sent|does NOT list/;

/**
 * `delegate doctor`: Node, the data home, the configuration, every profile (reachability and
 * key), every runner (login, git, shell, bubblewrap), the OS sandbox, Claude Code and the
 * status line — one line each, details indented. Exit 1 when any check fails (warnings do not
 * count).
 */
export const doctorCommand: CliCommand = {
  usage: 'doctor',
  summary:
    'check Node, data home, config, profiles (reachability, keys), runners, sandbox, Claude Code',
  help: `Checks what delegate needs and says what to fix: the Node version, the data home, the config files, every
profile (reachable, key present), every SSH runner (login, git, shell, bubblewrap), the OS sandbox and
Claude Code. Exit 1 when something is wrong.`,
  async run(args, context) {
    if (args.length > 0) {
      context.stderr.write('Usage: delegate doctor  (takes no arguments)\n');
      return 2;
    }
    // Profiles and runners are asked over the network: both at once.
    const [profiles, runners] = await Promise.all([checkProfiles(context), checkRunners(context)]);
    const checks = [
      checkNode(),
      checkDataHome(context.dataHome),
      checkConfig(context),
      ...profiles,
      ...runners,
      await checkSandbox(context),
      checkClaudeCode(context),
      checkStatusLine(context),
    ];
    const findings = distinctFindings(checks);
    for (const check of findings) {
      const detail = check.detail ? `\n${indent(check.detail)}` : '';
      context.stdout.write(inCliWords(`${check.level.padEnd(4)} ${check.what}${detail}\n`));
    }
    const failed = findings.filter((check) => check.level === 'FAIL').length;
    context.stdout.write(
      failed ? `\n${plural(failed, 'check')} failed.\n` : '\nAll checks passed.\n',
    );
    return failed ? 1 : 0;
  },
};

/** The checks to print: one copy of each finding (by its cause, else its whole text), first wins. */
function distinctFindings(checks: readonly Check[]): Check[] {
  const seen = new Set<string>();
  return checks.filter((check) => {
    const key = check.cause ?? `${check.level} ${check.what}\n${check.detail ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A failed check whose text ends with its error's message. */
function failure(what: string, error: unknown, level: Level = 'FAIL'): Check {
  const cause = errorMessage(error);
  return { level, what: `${what}: ${cause}`, cause };
}

function checkNode(): Check {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= MIN_NODE_MAJOR
    ? { level: 'ok', what: `Node.js ${process.version}` }
    : {
        level: 'FAIL',
        what: `Node.js ${process.version}: delegate needs Node.js ${MIN_NODE_MAJOR} or newer on PATH`,
      };
}

function checkDataHome(dataHome: string): Check {
  try {
    mkdirSync(dataHome, { recursive: true });
    const probe = join(dataHome, `.doctor-${process.pid}`);
    writeFileSync(probe, 'ok');
    rmSync(probe);
    return { level: 'ok', what: `data home ${dataHome} is writable` };
  } catch (error) {
    return {
      level: 'FAIL',
      what: `data home ${dataHome} is not writable: ${errorMessage(error)} (set DELEGATE_HOME to a writable folder)`,
    };
  }
}

function checkConfig(context: CliContext): Check {
  try {
    const config = loadConfig(context.dataHome, context.projectDir, context.env);
    const files = config.files.length ? config.files.join(', ') : 'no config file';
    const waiting = config.unapproved ? `, ${config.unapproved.size} awaiting approval` : '';
    return {
      level: 'ok',
      what: `config valid (${files}; ${plural(config.profiles.size, 'profile')}${waiting})`,
    };
  } catch (error) {
    return failure('config invalid', error);
  }
}

async function checkProfiles(context: CliContext): Promise<Check[]> {
  try {
    const text = await describeProviders(context, true, { runners: false });
    const isProblem = PROFILE_PROBLEM.test(text) || /^No worker is configured/m.test(text);
    const isWarned = /^WARNING: /m.test(text);
    const awaitsApproval = text.includes(' · NOT APPROVED: ');
    return [
      {
        level: isProblem ? 'FAIL' : isWarned || awaitsApproval ? 'warn' : 'ok',
        what: isProblem
          ? 'profiles: a profile cannot be used as it stands (see below)'
          : isWarned
            ? 'profiles reachable, keys in place, but a project file asked for changes that were not applied (see below)'
            : awaitsApproval
              ? 'profiles reachable, keys in place; a project file’s own profile waits for your approval (see below)'
              : 'profiles reachable, keys in place',
        detail: text,
      },
    ];
  } catch (error) {
    return [failure('profiles', error)];
  }
}

/** One check per runner: it logs in and has git; bubblewrap as the sandbox mode needs it. */
async function checkRunners(context: CliContext): Promise<Check[]> {
  let config;
  try {
    config = loadConfig(context.dataHome, context.projectDir, context.env);
  } catch {
    return []; // checkConfig says why
  }
  const mode = config.sandbox ?? 'auto';
  return Promise.all(
    [...(config.runners ?? [])].map(async ([name, runner]): Promise<Check> => {
      const what = `runner ${name} (${runnerWhere(runner)})`;
      try {
        const facts = await checkRunner(runnerAddress(name, runner), context);
        if (facts.problem) {
          return { level: 'FAIL', what: `${what} cannot take tasks`, detail: facts.problem };
        }
        const described = `${what}: ${runnerFactsText(facts)}`;
        try {
          const decided = runnerSandbox(name, facts, mode);
          return decided.sandboxed || mode === 'off'
            ? { level: 'ok', what: described }
            : {
                level: 'warn',
                what: described,
                detail: `${decided.note ?? 'no sandbox there'}: under "sandbox": "auto" its task commands run unsandboxed (and say so). Install bubblewrap there (apt-get install bubblewrap).`,
              };
        } catch (error) {
          if (!(error instanceof UserError)) throw error;
          return { level: 'FAIL', what: described, detail: error.message };
        }
      } catch (error) {
        return failure(what, error);
      }
    }),
  );
}

async function checkSandbox(context: CliContext): Promise<Check> {
  try {
    const sandbox = await import('../sandbox/index.ts');
    const result = await sandbox.checkSandbox(context.env);
    await sandbox.closeSandbox();
    // A fresh check: the next task start takes it (or, failed, no longer takes an earlier one).
    sandbox.recordSandboxCheck(context.dataHome, context.env, result);
    if (result.isAvailable) {
      const warnings = result.warnings.length ? ` (${result.warnings.join('; ')})` : '';
      return { level: 'ok', what: `OS sandbox available for task commands${warnings}` };
    }
    return {
      level: 'warn',
      what: `OS sandbox not available: ${result.reason ?? 'unknown reason'}; tasks run unsandboxed (and say so) unless "sandbox" is "required". ${sandbox.sandboxInstallHint()}`,
    };
  } catch (error) {
    return failure('OS sandbox not checked', error, 'warn');
  }
}

function checkClaudeCode(context: CliContext): Check {
  const result = spawnSync('claude', ['--version'], {
    env: { ...context.env },
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (result.error) {
    const isMissing = (result.error as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      level: 'warn',
      what: isMissing
        ? 'Claude Code: `claude` is not on PATH (skipped)'
        : `Claude Code: \`claude --version\` failed: ${result.error.message}`,
    };
  }
  const version = result.stdout.trim().split('\n')[0] ?? '';
  return result.status === 0
    ? { level: 'ok', what: `Claude Code ${version}` }
    : { level: 'warn', what: `Claude Code: \`claude --version\` exited ${result.status}` };
}

function checkStatusLine(context: CliContext): Check {
  try {
    return { level: 'ok', what: describeStatusLineSetup(context) };
  } catch (error) {
    return failure('status line', error, 'warn');
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `     ${line}`)
    .join('\n');
}
