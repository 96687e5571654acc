import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Environment } from '../config/paths.ts';
import { atJsonError, jsonErrorReason, parseJson } from '../util/read-json.ts';
import { UserError, errorMessage } from '../util/user-error.ts';

/** The user's Claude Code settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`. */
export function claudeSettingsPath(env: Environment): string {
  const configDir = env.CLAUDE_CONFIG_DIR?.trim();
  if (configDir) return join(resolve(configDir), 'settings.json');
  return join(env.HOME?.trim() || homedir(), '.claude', 'settings.json');
}

export interface ClaudeSettings {
  /** The path as named (what messages show). */
  path: string;
  /** Where writes go: a settings.json symlinked from a dotfiles repository stays a symlink. */
  target: string;
  exists: boolean;
  json: Record<string, unknown>;
}

/**
 * Reads the settings file; refuses (UserError, nothing written) one that is not a JSON object,
 * since rewriting it would lose what the user wrote.
 */
export function readClaudeSettings(path: string): ClaudeSettings {
  const target = realpathOrSelf(path);
  let text: string;
  try {
    text = readFileSync(target, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { path, target, exists: false, json: {} };
    }
    throw new UserError(`Cannot read ${path}: ${errorMessage(error)}. Nothing was changed.`);
  }
  let json: unknown;
  try {
    json = text.trim() === '' ? {} : parseJson(text);
  } catch (error) {
    throw new UserError(
      `${atJsonError(path, text)}: not valid JSON (${jsonErrorReason(error)}). Fix it (or move it away) and run this again; nothing was changed.`,
    );
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UserError(
      `${path} does not hold a JSON object. Fix it (or move it away) and run this again; nothing was changed.`,
    );
  }
  return { path, target, exists: true, json: json as Record<string, unknown> };
}

/**
 * Writes the settings back (two-space JSON, the file's mode kept), after copying the current
 * file to `<file>.delegate-backup-<time>`. Returns the backup's path, if there was a file.
 */
export function writeClaudeSettings(
  settings: ClaudeSettings,
  json: Record<string, unknown>,
  now: Date,
): string | undefined {
  mkdirSync(dirname(settings.target), { recursive: true });
  let backup: string | undefined;
  let mode = 0o644;
  if (settings.exists) {
    mode = statSync(settings.target).mode & 0o777;
    backup = `${settings.target}.delegate-backup-${now.toISOString().replace(/[:.]/g, '-')}`;
    copyFileSync(settings.target, backup);
  }
  // Exclusive, under a name nobody can predict: a link planted at the temp path is never followed.
  const temp = `${settings.target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, `${JSON.stringify(json, null, 2)}\n`, { mode, flag: 'wx' });
  chmodSync(temp, mode);
  renameSync(temp, settings.target);
  return backup;
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
