import { chmodSync, statSync, type Stats } from 'node:fs';
import { readUnlessChanged, settledFingerprint, type KeptReads } from '../util/file-fingerprint.ts';
import { readJsonFile } from '../util/read-json.ts';
import { errorMessage, UserError } from '../util/user-error.ts';
import { writeSecretFileSync } from '../util/secret-file.ts';
import { credentialsPath } from '../config/paths.ts';

/**
 * Keys the user entered (provider_key, `delegate provider-key`), in `credentials.json` in the
 * data home, mode 0600. Each key belongs to the origin (scheme, host, port) it was entered for:
 * it is sent there and nowhere else, so repointing a profile cannot carry it to another host.
 * Nothing here ever puts a key into a message.
 */
export interface StoredKey {
  key: string;
  /** `new URL(baseUrl).origin` of the profile when the key was entered. */
  origin: string;
  savedAt: string;
}

export interface Credentials {
  keys: Record<string, StoredKey>;
  /** Set when the file was readable by others and has just been made 0600. */
  repaired?: string;
}

const PRIVATE_MODE = 0o600;

/** The origin a key is bound to. */
export function keyOrigin(baseUrl: string): string {
  return new URL(baseUrl).origin;
}

/**
 * credentials.json cannot be used (garbage, cut off, a directory, unreadable): only profiles that
 * need a stored key are affected, and their error names the file and the fix.
 */
export class CredentialsError extends UserError {}

function credentialsProblem(file: string, problem: string): CredentialsError {
  return new CredentialsError(
    `${file} ${problem}, so the keys stored in it cannot be read. Move it away (e.g. mv ${file} ${file}.broken) ` +
      'and store the keys again with provider_key (or `delegate provider-key <profile>` in a terminal). ' +
      'Profiles that need no stored key (local ones, and those with api_key_env set) keep working meanwhile.',
  );
}

/** Reads the stored keys, first making a file that others could read private again. */
export function readCredentials(dataHome: string): Credentials {
  const { keys, repaired } = readCredentialsFile(dataHome);
  return { keys, ...(repaired ? { repaired } : {}) };
}

/** credentials.json as read: its keys, its other sections, and a mode repair made on reading it. */
interface CredentialsFile {
  keys: Record<string, StoredKey>;
  sections: Record<string, unknown>;
  repaired?: string;
}

const keptFiles: KeptReads<CredentialsFile> = new Map();

/**
 * credentials.json, read again only when it changed (a model call looks it up several times: its
 * key, and every secret cut out of the answer). A chmod changes the fingerprint too, so a file
 * made readable by others is found and repaired at the next look. What it returns is shared: do
 * not change it.
 */
function readCredentialsFile(dataHome: string): CredentialsFile {
  const file = credentialsPath(dataHome);
  return readUnlessChanged(keptFiles, file, settledFingerprint(file), () => readFresh(file));
}

function readFresh(file: string): CredentialsFile {
  let stats: Stats | undefined;
  try {
    stats = statSync(file, { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return { keys: {}, sections: {} };
    throw credentialsProblem(file, `cannot be read (${code ?? errorMessage(error)})`);
  }
  if (!stats) return { keys: {}, sections: {} };
  if (!stats.isFile())
    throw credentialsProblem(
      file,
      stats.isDirectory() ? 'is a directory, not a file' : 'is not a regular file',
    );
  const mode = stats.mode & 0o777;
  let repaired: string | undefined;
  if ((mode & 0o077) !== 0) {
    chmodSync(file, PRIVATE_MODE);
    repaired =
      `${file} was readable by other users (mode ${mode.toString(8).padStart(4, '0')}); it is now 0600. ` +
      'Replace the keys it held if others could have read them.';
  }
  return { ...parseFile(file), ...(repaired ? { repaired } : {}) };
}

function parseFile(file: string): Omit<CredentialsFile, 'repaired'> {
  // The parser's message quotes the text, which holds keys: never pass it on.
  const read = readJsonFile(file, { isSecret: true });
  if (read === undefined) return { keys: {}, sections: {} };
  if ('problem' in read) throw credentialsProblem(file, read.problem);
  const json = read.value;
  const sections =
    json && typeof json === 'object' && !Array.isArray(json)
      ? { ...(json as Record<string, unknown>) }
      : {};
  delete sections.version;
  delete sections.keys;
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (!keys || typeof keys !== 'object') return { keys: {}, sections };
  const valid: Record<string, StoredKey> = {};
  for (const [name, entry] of Object.entries(keys as Record<string, Partial<StoredKey>>)) {
    if (typeof entry?.key === 'string' && typeof entry.origin === 'string') {
      valid[name] = { key: entry.key, origin: entry.origin, savedAt: String(entry.savedAt ?? '') };
    }
  }
  return { keys: valid, sections };
}

/** readCredentials' note for `providers`: the mode repair, or why the file cannot be used. */
export function credentialsNote(dataHome: string): string | undefined {
  try {
    return readCredentials(dataHome).repaired;
  } catch (error) {
    return errorMessage(error);
  }
}

/** The stored key of one profile, if any. */
export function storedKey(dataHome: string, profile: string): StoredKey | undefined {
  const { keys } = readCredentials(dataHome);
  return Object.hasOwn(keys, profile) ? keys[profile] : undefined;
}

/** Stores (or replaces) a profile's key bound to `origin`; call under the settings lock. */
export function saveKey(
  dataHome: string,
  profile: string,
  key: string,
  origin: string,
  now: Date,
): Credentials {
  const current = readCredentials(dataHome);
  const keys = { ...current.keys, [profile]: { key, origin, savedAt: now.toISOString() } };
  writeKeys(dataHome, keys);
  return { keys, ...(current.repaired ? { repaired: current.repaired } : {}) };
}

/** Forgets a profile's key; true when there was one. Call under the settings lock. */
export function removeKey(dataHome: string, profile: string): boolean {
  const { keys } = readCredentials(dataHome);
  if (!(profile in keys)) return false;
  const rest = Object.fromEntries(Object.entries(keys).filter(([name]) => name !== profile));
  writeKeys(dataHome, rest);
  return true;
}

function writeKeys(dataHome: string, keys: Record<string, StoredKey>): void {
  const { sections } = readCredentialsFile(dataHome);
  writeSecretFileSync(
    credentialsPath(dataHome),
    `${JSON.stringify({ ...sections, version: 1, keys }, null, 2)}\n`,
  );
}

/**
 * A section of credentials.json beside `keys` (`copilot`: the GitHub login, see
 * providers/copilot/copilot-store.ts), after the same mode repair as `readCredentials`: a copy,
 * which the caller may change.
 */
export function readCredentialsSection(dataHome: string, section: string): unknown {
  const value = readCredentialsFile(dataHome).sections[section];
  return value === undefined ? undefined : structuredClone(value);
}

/**
 * The stored keys and one section beside them, from one look at the file, for a caller that
 * only reads them (every model call lists the secrets to cut out of its answer): shared, not
 * copies; do not change them.
 */
export function readKeysAndSection(
  dataHome: string,
  section: string,
): { keys: Readonly<Record<string, StoredKey>>; section: unknown } {
  const file = readCredentialsFile(dataHome);
  return { keys: file.keys, section: file.sections[section] };
}

/** Replaces (or, with undefined, removes) one section, keeping the keys; call under the settings lock. */
export function writeCredentialsSection(dataHome: string, section: string, value: unknown): void {
  const { keys, sections: current } = readCredentialsFile(dataHome);
  const sections = { ...current, [section]: value };
  if (value === undefined) delete sections[section];
  writeSecretFileSync(
    credentialsPath(dataHome),
    `${JSON.stringify({ ...sections, version: 1, keys }, null, 2)}\n`,
  );
}

/**
 * Checks what the user typed before it is stored: one line of printable characters, not the
 * name of a variable (those go in api_key_env). Messages never repeat the input.
 */
export function checkKeyInput(input: string): string {
  const key = input.trim();
  if (!key) throw new UserError('The key was empty; nothing was stored.');
  if (/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(key)) {
    throw new UserError(
      'That looks like the NAME of an environment variable, not a key; nothing was stored. To use a variable, set api_key_env with provider_set instead.',
    );
  }
  if (/[^\x21-\x7e]/.test(key)) {
    throw new UserError(
      'The key contains spaces, line breaks or non-ASCII characters, which no HTTP header can carry; nothing was stored. Paste the key alone.',
    );
  }
  return key;
}
