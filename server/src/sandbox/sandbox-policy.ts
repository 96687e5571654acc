import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ResourceLimits } from '../config/resource-limits.ts';

/** Where a sandboxed command may write and read, and which hosts it may reach. */
export interface SandboxPolicy {
  /** The only folders commands may write: the task directory and its temp folder. */
  writable: string[];
  /** Files and folders inside `writable` that stay read-only: the task's git metadata. */
  readOnly: string[];
  /** Folders and files commands may not read: the user's secrets and the whole data home. */
  unreadable: string[];
  /** Paths inside an unreadable folder that stay readable (the task's own folders under the data home). */
  readable: string[];
  /** Hosts (`name`, `*.name`, `name:port`, IP literal) reachable through the sandbox's proxy; none by default. */
  allowHosts: string[];
  /** TMPDIR inside the sandbox: the task's own temp folder. */
  tmpDir: string;
  /** HOME of the commands, whose tool-made write spots (`~/.npm/_logs`…) are closed. */
  home: string;
  limits: ResourceLimits;
}

export const DEFAULT_LIMITS: ResourceLimits = { processes: 1024, memoryMb: 8192 };

/**
 * The usual homes of keys, tokens and logins, relative to HOME. Reads are otherwise open
 * (toolchains under HOME such as nvm, pyenv or cargo must keep working), so this list is
 * what keeps a command from reading the user's credentials.
 */
export const SECRET_HOME_PATHS: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.config/gcloud',
  '.azure',
  '.kube',
  '.docker',
  '.netrc',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.config/git/credentials',
  '.config/gh',
  '.config/hub',
  '.config/op',
  '.config/sops',
  '.password-store',
  '.vault-token',
  '.terraform.d',
  '.oci',
  '.pgpass',
  '.my.cnf',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.m2/settings-security.xml',
  '.local/share/keyrings',
  '.claude/.credentials.json',
  '.claude.json',
];

export interface TaskSandboxInput {
  /** The folder the task works in (its worktree, or the workdir of an in-place task). */
  taskDir: string;
  /** The task's TMPDIR (`jobs/<id>/tmp`). */
  tmpDir: string;
  dataHome: string;
  /** HOME of the worker; the OS's home directory when unset. */
  home?: string;
  allowHosts?: readonly string[];
  /** Further paths to keep readable inside the data home, e.g. the git guard's folder. */
  readable?: readonly string[];
  /** Paths inside the task directory that commands may not change (git metadata). */
  readOnly?: readonly string[];
  limits?: ResourceLimits;
  /** Further folders commands may write (and read), e.g. a CLI engine's private state folder. */
  writable?: readonly string[];
}

/**
 * A task's policy: writes only in its directory and TMPDIR, never to its git metadata; no reading the data home
 * (credentials.json, other tasks, the config) except those two, nor the secrets under HOME;
 * network only to `allowHosts`.
 */
export function taskSandboxPolicy(input: TaskSandboxInput): SandboxPolicy {
  const home = input.home?.trim() || homedir();
  return {
    writable: [input.taskDir, input.tmpDir, ...(input.writable ?? [])],
    readOnly: [...new Set(input.readOnly ?? [])],
    unreadable: [input.dataHome, ...SECRET_HOME_PATHS.map((path) => join(home, path))],
    readable: [input.taskDir, input.tmpDir, ...(input.readable ?? []), ...(input.writable ?? [])],
    allowHosts: [...new Set(input.allowHosts ?? [])],
    tmpDir: input.tmpDir,
    home,
    limits: input.limits ?? DEFAULT_LIMITS,
  };
}
