import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Environment } from '../config/paths.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { UserError, errorMessage } from '../util/user-error.ts';
import {
  claudeSettingsPath,
  readClaudeSettings,
  writeClaudeSettings,
  type ClaudeSettings,
} from './claude-settings.ts';
import { projectStatusKey } from '../store/status-key.ts';
import { parseJson } from '../util/read-json.ts';

/** In every command this installs; how an installed status line is recognised as delegate's. */
export const READER_MARKER = 'delegate-statusline.';
const READERS = { sh: 'delegate-statusline.sh', ps1: 'delegate-statusline.ps1' } as const;
const SOURCES = { sh: 'statusline.sh', ps1: 'statusline.ps1' } as const;
/** Refresh period set when delegate's line is the only one (a chained command keeps its own). */
const REFRESH_S = 5;

export interface StatusLineContext {
  env: Environment;
  dataHome: string;
  now(): Date;
}

export interface InstallOptions {
  /** The plugin folder holding `statusline/`, copied from (never pointed at: it moves on updates). */
  pluginRoot: string;
  platform: NodeJS.Platform;
}

/** The `statusLine` value of Claude Code's settings (a command one). */
interface CommandStatusLine extends Record<string, unknown> {
  type: 'command';
  command: string;
}

/** What uninstall needs: the status line that was there before (null: none). */
interface InstallRecord {
  settingsPath: string;
  previous: CommandStatusLine | null;
  /** Install created the settings file; uninstall removes it again if nothing else was added. */
  createdFile?: boolean;
  installedAt: string;
}

/**
 * Installs delegate's status line into the user's Claude Code settings: the reader scripts are
 * copied into `<data home>/bin/` (a stable path), the settings are backed up and merged, and an
 * existing status line is chained (run by the reader, its output first) rather than replaced.
 * Running it again changes nothing but the reader copies.
 */
export function installStatusLine(context: StatusLineContext, options: InstallOptions): string {
  const settings = readClaudeSettings(claudeSettingsPath(context.env));
  const current = commandStatusLine(settings);
  copyReaders(context.dataHome, options.pluginRoot);
  const paths = chainPaths(context.dataHome, settings);
  if (current && isDelegates(current)) {
    const chain = readRecord(paths.record)?.previous ? paths.chain : undefined;
    const command = readerCommand(context.dataHome, options.platform, chain);
    if (command === current.command) {
      return `delegate's status line is already installed in ${settings.path}; the reader scripts in ${binDir(context.dataHome)} were refreshed.`;
    }
    const backup = writeClaudeSettings(
      settings,
      { ...settings.json, statusLine: { ...current, command } },
      context.now(),
    );
    return `Updated delegate's status line command in ${settings.path}${backupNote(backup)}.`;
  }
  const record: InstallRecord = {
    settingsPath: settings.path,
    previous: current ?? null,
    ...(settings.exists ? {} : { createdFile: true }),
    installedAt: context.now().toISOString(),
  };
  writeFileAtomicSync(paths.record, `${JSON.stringify(record, null, 2)}\n`);
  if (current) writeFileAtomicSync(paths.chain, `${current.command}\n`);
  else rmSync(paths.chain, { force: true });
  const command = readerCommand(
    context.dataHome,
    options.platform,
    current ? paths.chain : undefined,
  );
  const statusLine = current
    ? { ...current, command }
    : { type: 'command', command, refreshInterval: REFRESH_S };
  const backup = writeClaudeSettings(settings, { ...settings.json, statusLine }, context.now());
  const chained = current
    ? ` It chains your status line (\`${current.command}\`): its output comes first, delegate's line below.`
    : '';
  return `Installed delegate's status line in ${settings.path}${backupNote(backup)}.${chained} It shows this project's running tasks, questions and recent results; \`delegate statusline uninstall\` restores the previous setting.`;
}

/**
 * Restores what install replaced (the chained status line, or none), after a backup, in the
 * user's settings or in `settingsPath` (one install recorded for another CLAUDE_CONFIG_DIR).
 */
export function uninstallStatusLine(context: StatusLineContext, settingsPath?: string): string {
  const settings = readClaudeSettings(settingsPath ?? claudeSettingsPath(context.env));
  const current = commandStatusLine(settings);
  const paths = chainPaths(context.dataHome, settings);
  const record = readRecord(paths.record);
  let message: string;
  if (current && isDelegates(current)) {
    const json = { ...settings.json };
    if (record?.previous) json.statusLine = record.previous;
    else delete json.statusLine;
    const isUntouched = record?.createdFile === true && Object.keys(json).length === 0;
    if (isUntouched) rmSync(settings.target, { force: true });
    const backup = isUntouched ? undefined : writeClaudeSettings(settings, json, context.now());
    message = record?.previous
      ? `Restored your previous status line (\`${record.previous.command}\`) in ${settings.path}${backupNote(backup)}.`
      : `Removed delegate's status line from ${settings.path}${backupNote(backup)}.`;
  } else {
    message = current
      ? `The status line in ${settings.path} is not delegate's (\`${current.command}\`); left as it is.`
      : `No status line is set in ${settings.path}; nothing to remove.`;
  }
  rmSync(paths.record, { force: true });
  rmSync(paths.chain, { force: true });
  return message;
}

/** A settings file holding delegate's status line, and what uninstalling puts back. */
export interface InstalledStatusLine {
  settingsPath: string;
  /** The chained command that is restored; absent: the entry is removed. */
  previous?: string;
}

/**
 * Every settings file where delegate's status line is installed now: the user's, and each one an
 * install recorded (CLAUDE_CONFIG_DIR may have differed). Files that cannot be read are
 * `problems`, never guessed at.
 */
export function installedStatusLines(context: StatusLineContext): {
  installed: InstalledStatusLine[];
  problems: string[];
} {
  const recordDir = join(context.dataHome, 'statusline');
  let recorded: string[] = [];
  try {
    recorded = readdirSync(recordDir)
      .filter((name) => name.endsWith('.installed.json'))
      .flatMap((name) => readRecord(join(recordDir, name))?.settingsPath ?? []);
  } catch {
    // No install was recorded.
  }
  const installed: InstalledStatusLine[] = [];
  const problems: string[] = [];
  for (const path of new Set([claudeSettingsPath(context.env), ...recorded])) {
    try {
      const settings = readClaudeSettings(path);
      const current = commandStatusLine(settings);
      if (!current || !isDelegates(current)) continue;
      const previous = readRecord(chainPaths(context.dataHome, settings).record)?.previous;
      installed.push({ settingsPath: path, ...(previous ? { previous: previous.command } : {}) });
    } catch (error) {
      problems.push(errorMessage(error));
    }
  }
  return { installed, problems };
}

/** The reader copies and install records in the data home (what uninstall removes besides settings). */
export function statusLineFiles(dataHome: string): string[] {
  const files = Object.values(READERS).map((name) => join(binDir(dataHome), name));
  return [...files, join(dataHome, 'statusline')].filter((path) => existsSync(path));
}

/** One line for `doctor` and `statusline show`: installed where, chaining what. */
export function describeStatusLineSetup(context: StatusLineContext): string {
  const settings = readClaudeSettings(claudeSettingsPath(context.env));
  const current = commandStatusLine(settings);
  if (!current)
    return `status line not installed in ${settings.path} (delegate statusline install)`;
  if (!isDelegates(current)) {
    return `status line in ${settings.path} is not delegate's (\`${current.command}\`); delegate statusline install chains it`;
  }
  const previous = readRecord(chainPaths(context.dataHome, settings).record)?.previous;
  const chained = previous ? `, chaining \`${previous.command}\`` : '';
  return `status line installed in ${settings.path}${chained}`;
}

function commandStatusLine(settings: ClaudeSettings): CommandStatusLine | undefined {
  const value = settings.json.statusLine;
  if (value === undefined || value === null) return undefined;
  const isCommand =
    typeof value === 'object' &&
    !Array.isArray(value) &&
    (value as Record<string, unknown>).type === 'command' &&
    typeof (value as Record<string, unknown>).command === 'string';
  if (!isCommand) {
    throw new UserError(
      `The "statusLine" in ${settings.path} is not a command status line (${JSON.stringify(value)}), so it cannot be chained. Fix or remove it and run this again; nothing was changed.`,
    );
  }
  return value as CommandStatusLine;
}

function isDelegates(statusLine: CommandStatusLine): boolean {
  return statusLine.command.includes(READER_MARKER);
}

function binDir(dataHome: string): string {
  return join(dataHome, 'bin');
}

/** Per settings file (CLAUDE_CONFIG_DIR may differ between installs): the record and the chained command. */
function chainPaths(dataHome: string, settings: ClaudeSettings): { record: string; chain: string } {
  const key = projectStatusKey(settings.target);
  const dir = join(dataHome, 'statusline');
  return { record: join(dir, `${key}.installed.json`), chain: join(dir, `${key}.chain.sh`) };
}

function readRecord(path: string): InstallRecord | undefined {
  try {
    return parseJson(readFileSync(path, 'utf8')) as InstallRecord;
  } catch {
    return undefined;
  }
}

/** The settings' command: the copied reader, and the chained command's file as its argument. */
function readerCommand(
  dataHome: string,
  platform: NodeJS.Platform,
  chain: string | undefined,
): string {
  if (platform === 'win32') {
    const script = join(binDir(dataHome), READERS.ps1);
    const args = [script, ...(chain ? [chain] : [])].map((arg) => `"${arg}"`).join(' ');
    return `powershell -NoProfile -ExecutionPolicy Bypass -File ${args}`;
  }
  const script = join(binDir(dataHome), READERS.sh);
  return ['sh', script, ...(chain ? [chain] : [])].map(shellQuote).join(' ');
}

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function copyReaders(dataHome: string, pluginRoot: string): void {
  mkdirSync(binDir(dataHome), { recursive: true });
  for (const kind of ['sh', 'ps1'] as const) {
    const target = join(binDir(dataHome), READERS[kind]);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, readFileSync(join(pluginRoot, 'statusline', SOURCES[kind])));
    chmodSync(temp, 0o755);
    renameSync(temp, target);
  }
}

function backupNote(backup: string | undefined): string {
  return backup ? ` (backup: ${backup})` : '';
}
