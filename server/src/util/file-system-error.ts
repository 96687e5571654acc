import { accessSync, constants, statSync } from 'node:fs';
import { dirname, relative, isAbsolute } from 'node:path';

/**
 * Failures of the file system are not bugs of delegate: a read-only or full disk, a data home
 * the user cannot write, a file where a folder should be. This turns such an error into a
 * message that names the path and what to do; undefined for anything else (a real bug).
 */
export function describeFileSystemError(error: unknown, dataHome?: string): string | undefined {
  const failure = error as NodeJS.ErrnoException;
  if (!(error instanceof Error) || typeof failure.code !== 'string') return undefined;
  const path = failure.path ?? (failure as { dest?: string }).dest;
  if (!path || !HANDLED.has(failure.code)) return undefined;
  const isInDataHome = dataHome !== undefined && isInside(dataHome, path);
  // Node's recursive mkdir reports ENOENT on a read-only file system: ask the disk itself.
  const blocked = isReadOnlyOrDenied(failure.code, path);
  // A missing file elsewhere is left to the caller: it may be a real bug.
  if (failure.code === 'ENOENT' && blocked === undefined) return undefined;
  const what = blocked ?? cause(failure.code);
  if (isInDataHome) {
    const fix =
      blocked !== undefined
        ? `delegate keeps its tasks, keys, ledger and locks in its data home ${dataHome}, which must be writable. Make it writable, or point DELEGATE_HOME at a writable folder (e.g. export DELEGATE_HOME=$HOME/.delegate-rw) and restart Claude Code.`
        : `It is in delegate's data home ${dataHome}: move the damaged entry away (or free space), or point DELEGATE_HOME at another folder, then call again.`;
    return `Cannot ${verb(failure.syscall)} ${path}: ${what}. ${fix}`;
  }
  return `Cannot ${verb(failure.syscall)} ${path}: ${what}. Check that path (permissions, free space, a file where a folder should be) and call again.`;
}

const HANDLED = new Set([
  'EROFS',
  'EACCES',
  'EPERM',
  'ENOSPC',
  'EDQUOT',
  'ENOTDIR',
  'EISDIR',
  'EEXIST',
  'ENOENT',
  'EMFILE',
  'ENFILE',
  'ENAMETOOLONG',
  'ELOOP',
]);

function isInside(root: string, path: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot));
}

/** "the file system is read-only" or "permission denied" when the nearest existing folder says so. */
function isReadOnlyOrDenied(code: string, path: string): string | undefined {
  if (code === 'EROFS') return 'the file system is read-only (EROFS)';
  if (code === 'EACCES' || code === 'EPERM') return `permission denied (${code})`;
  if (code !== 'ENOENT') return undefined;
  for (let dir = dirname(path); dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      if (!statSync(dir).isDirectory()) return undefined;
    } catch {
      continue;
    }
    try {
      accessSync(dir, constants.W_OK);
      return undefined;
    } catch (error) {
      const found = (error as NodeJS.ErrnoException).code;
      return found === 'EROFS'
        ? `the file system is read-only (EROFS at ${dir})`
        : `permission denied (${found ?? 'EACCES'} at ${dir})`;
    }
  }
  return undefined;
}

function cause(code: string): string {
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return `the disk is full (${code})`;
    case 'ENOTDIR':
      return 'a file stands where a folder is expected (ENOTDIR)';
    case 'EISDIR':
      return 'a folder stands where a file is expected (EISDIR)';
    case 'EEXIST':
      return 'something else already exists there (EEXIST)';
    case 'ENOENT':
      return 'it does not exist (ENOENT)';
    case 'EMFILE':
    case 'ENFILE':
      return `too many open files (${code})`;
    default:
      return code;
  }
}

function verb(syscall: string | undefined): string {
  if (!syscall) return 'use';
  if (/^(read|stat|lstat|scandir|readlink|access)$/.test(syscall)) return 'read';
  if (syscall === 'mkdir') return 'create the folder';
  if (/^(rename|unlink|rmdir|rm|write|copyfile|symlink|link|chmod|utime)/.test(syscall))
    return 'write';
  return syscall;
}
