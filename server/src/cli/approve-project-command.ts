import { resolve } from 'node:path';
import { approveProject } from '../profiles/approve-project.ts';
import { usageError } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'approve-project [<project dir>]';

/**
 * `delegate approve-project`: the user's approval of the endpoints a project's own profiles
 * point at (profiles/approve-project.ts). Only a person at a terminal (or `!` in Claude Code)
 * runs it; no MCP tool does the same.
 */
export const approveProjectCommand: CliCommand = {
  usage: USAGE,
  summary: "approve the endpoints of the profiles only a project's .claude/delegate.json defines",
  help: `A repository's .claude/delegate.json may add profiles, but no call goes to an endpoint that only it names
until you approve it here, once. This records in your config.json, under the project file's path, the
endpoint (format and baseUrl) of each such profile, and lists them. If the file later points a profile
elsewhere, that profile needs approving again. The project is the current one unless a folder is given.`,
  async run(args, context) {
    if (args.length > 1 || args[0]?.startsWith('-')) {
      return usageError(context, `unexpected arguments "${args.join(' ')}".`, USAGE);
    }
    const projectDir = args[0] === undefined ? context.projectDir : resolve(args[0]);
    context.stdout.write(`${await approveProject({ ...context, projectDir })}\n`);
    return 0;
  },
};
