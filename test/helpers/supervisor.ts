import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { RecordedRequest } from './fake-provider.ts';
import { REPO_ROOT } from './mcp-server.ts';

/** Full name under which Claude Code shows one of our tools to the model. */
export const toolName = (tool: string) => `mcp__plugin_delegate_workers__${tool}`;

/** The text of every tool_result a supervisor request carries, by tool_use id. */
export function toolResults(
  request: RecordedRequest,
): Map<string, { text: string; isError: boolean }> {
  const results = new Map<string, { text: string; isError: boolean }>();
  for (const message of request.body?.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const text =
        typeof block.content === 'string'
          ? block.content
          : (block.content ?? []).map((part: { text?: string }) => part.text ?? '').join('');
      results.set(block.tool_use_id, { text, isError: block.is_error === true });
    }
  }
  return results;
}

/**
 * A copy of the checkout as `git clone` would give it (tracked and untracked-but-not-ignored
 * files), so an install test sees what users get, without node_modules or .cache.
 */
function copyCheckout(target: string): string {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    // Tracked files deleted in the working tree (e.g. rebuilt bundles) are not part of it.
    .filter((file) => file && existsSync(join(REPO_ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(target, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(target, file));
  }
  return target;
}

/**
 * A marketplace that installs the plugin the way a GitHub install does: from a committed git
 * repository (a copy of this checkout) whose `plugin/` folder is the plugin, cloned and copied
 * into Claude Code's plugin cache and run from there.
 * Returns the marketplace folder; the plugin installs as `delegate@delegate-test`.
 */
export function gitMarketplace(root: string): string {
  const checkout = copyCheckout(join(root, 'checkout'));
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: checkout,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
      stdio: 'ignore',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'checkout');
  const marketplace = join(root, 'marketplace');
  mkdirSync(join(marketplace, '.claude-plugin'), { recursive: true });
  writeFileSync(
    join(marketplace, '.claude-plugin', 'marketplace.json'),
    JSON.stringify({
      name: 'delegate-test',
      owner: { name: 'tests' },
      plugins: [
        {
          name: 'delegate',
          source: { source: 'git-subdir', url: `file://${checkout}`, path: 'plugin' },
        },
      ],
    }),
  );
  return marketplace;
}
