import { readFileSync, realpathSync } from 'node:fs';
import { freshStatusText } from '../store/status-lines-file.ts';
import { sessionOf } from '../store/job-file.ts';
import {
  describeStatusLineSetup,
  installStatusLine,
  uninstallStatusLine,
} from './install-statusline.ts';
import { statusLinesPath } from '../store/status-key.ts';
import { usageError } from './cli-args.ts';
import type { CliCommand, CliContext } from './cli-command.ts';

const USAGE = 'statusline install|uninstall|show';

/**
 * `delegate statusline install|uninstall|show`: puts delegate's status line into the user's
 * Claude Code settings (plugins cannot), chaining any status line already there; takes it out
 * again; or shows the setting and what the line says for this project now (for this session, when run in one).
 */
export const statuslineCommand: CliCommand = {
  usage: USAGE,
  summary: "install delegate's status line in your Claude Code settings (chains yours)",
  help: `install puts delegate's status line into your Claude Code settings, chained after yours; uninstall
puts yours back; show prints the setting and what the line says for this project now.`,
  run(args, context) {
    const [action, ...rest] = args;
    if (rest.length > 0) return Promise.resolve(usageError(context, 'too many arguments.', USAGE));
    switch (action) {
      case 'install':
        context.stdout.write(
          `${installStatusLine(context, { pluginRoot: context.pluginRoot, platform: process.platform })}\n`,
        );
        return Promise.resolve(0);
      case 'uninstall':
        context.stdout.write(`${uninstallStatusLine(context)}\n`);
        return Promise.resolve(0);
      case 'show':
        context.stdout.write(`${showStatusLine(context)}\n`);
        return Promise.resolve(0);
      default:
        return Promise.resolve(
          usageError(context, action ? `unknown action "${action}".` : 'say what to do.', USAGE),
        );
    }
  },
};

function showStatusLine(context: CliContext): string {
  let project = context.projectDir;
  try {
    project = realpathSync(project);
  } catch {
    // Shown as given.
  }
  let line = '';
  try {
    line = freshStatusText(
      readFileSync(statusLinesPath(context.dataHome), 'utf8'),
      project,
      Date.now(),
      sessionOf(context.env),
    );
  } catch {
    // No task has been written for this project yet.
  }
  return `${describeStatusLineSetup(context)}\nNow, for ${project}: ${line || '(nothing to show)'}`;
}
