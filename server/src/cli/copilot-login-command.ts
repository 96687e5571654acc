import { listNames, loadConfig } from '../profiles/load-config.ts';
import { approved, findProfile } from '../profiles/resolve-profile.ts';
import { copilotPlace } from '../profiles/copilot/copilot-profile.ts';
import { forgetLogin, loggedInText } from '../profiles/copilot/copilot-key.ts';
import { copilotApiToken } from '../profiles/copilot/copilot-token.ts';
import { endedText } from '../profiles/copilot/device-flow.ts';
import {
  forgetEndedLogin,
  startDeviceLogin,
  waitForLogin,
} from '../profiles/copilot/device-login.ts';
import { UserError } from '../util/user-error.ts';
import type { CliCommand, CliContext } from './cli-command.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

const USAGE = 'copilot-login <profile> [--logout]';

/**
 * `delegate copilot-login <profile>`: GitHub's device flow in a terminal. Prints the URL and
 * the code, polls at GitHub's interval until the user approves (or the code expires, or they
 * deny), stores the login 0600 and checks it by getting a Copilot API token. Always a new
 * login, replacing the stored one; `--logout` forgets it.
 */
export const copilotLoginCommand: CliCommand = {
  usage: USAGE,
  summary: 'log a copilot profile in to GitHub (device flow), or out',
  help: `Runs GitHub's device flow for a copilot profile: opens a code to enter at github.com, waits for approval
and stores the login. --logout forgets it.

Options:
  --logout   forget the stored GitHub login of the profile`,
  async run(args, context) {
    const [name, flag, ...rest] = args;
    if (!name || name.startsWith('-') || rest.length > 0 || (flag && flag !== '--logout')) {
      context.stderr.write(`Usage: delegate ${USAGE}\n`);
      return 2;
    }
    const profile = copilotProfile(context, name);
    const place = copilotPlace(profile, context.env);
    if (flag === '--logout') {
      const had = await forgetLogin(place);
      context.stdout.write(
        had
          ? `Forgot the GitHub Copilot login for ${place.apiOrigin} (every copilot profile on that API).\n`
          : `There was no GitHub Copilot login for ${place.apiOrigin}.\n`,
      );
      return 0;
    }
    const pending = await startDeviceLogin(place);
    const minutes = Math.round((pending.expiresAt - Date.now()) / 60_000);
    context.stderr.write(
      `Log profile "${name}" in to GitHub Copilot: open ${pending.verificationUri} and enter the code\n\n` +
        `    ${pending.userCode}\n\nWaiting for GitHub (the code is valid ${minutes} min; Ctrl-C stops)…\n`,
    );
    const step = await waitForLogin(place, pending, { isBackground: false });
    if (step?.kind !== 'authorised') {
      const ended = step?.kind === 'ended' ? step.pending : undefined;
      if (ended) await forgetEndedLogin(place, ended);
      context.stderr.write(
        `${endedText(ended?.outcome ?? 'failed', ended?.detail)} Run the command again to retry.\n`,
      );
      return 1;
    }
    const token = await copilotApiToken(place, name);
    context.stdout.write(`${loggedInText(name, place, token)}\n`);
    return 0;
  },
};

/**
 * `delegate provider-key` on a copilot profile logs in instead of reading a key; any other
 * profile goes to `command`.
 */
export function withCopilotLogin(command: CliCommand): CliCommand {
  return {
    ...command,
    run: (args, context) =>
      args.length === 1 && isCopilot(context, args[0] ?? '')
        ? copilotLoginCommand.run(args, context)
        : command.run(args, context),
  };
}

function isCopilot(context: CliContext, name: string): boolean {
  try {
    return profileOf(context, name)?.format === 'copilot';
  } catch {
    return false;
  }
}

function profileOf(context: CliContext, name: string): ResolvedProfile | undefined {
  return loadConfig(context.dataHome, context.projectDir, context.env).profiles.get(name);
}

function copilotProfile(context: CliContext, name: string): ResolvedProfile {
  const config = loadConfig(context.dataHome, context.projectDir, context.env);
  const found = findProfile(config, name);
  const profile = found && approved(found);
  if (!profile) {
    throw new UserError(
      `Unknown profile "${name}" (profiles: ${listNames(config.profiles)}). Create it first in ` +
        `config.json in DELEGATE_HOME (~/.delegate), e.g. "${name}": {"format": "copilot", "model": "gpt-4.1"} ` +
        'under "profiles", or with provider_set in Claude Code.',
    );
  }
  if (profile.format !== 'copilot') {
    throw new UserError(
      `Profile "${name}" is ${profile.format}, not copilot; store its key with \`delegate provider-key ${name}\`.`,
    );
  }
  return profile;
}
