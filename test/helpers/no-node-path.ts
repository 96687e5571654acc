import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A PATH folder in `root` holding only `sh`, as on a machine without Node.js; with
 * `nodeVersion`, also a `node` that is the real one reporting itself as that version (no old
 * Node is installed here to run instead).
 */
export function pathWithoutNode(root: string, nodeVersion?: string): string {
  const path = join(root, nodeVersion ? `path-with-node-${nodeVersion}` : 'path-without-node');
  mkdirSync(path);
  symlinkSync('/bin/sh', join(path, 'sh'));
  if (nodeVersion) {
    const pretend = join(root, `node-${nodeVersion}.cjs`);
    writeFileSync(
      pretend,
      `Object.defineProperty(process.versions, 'node', { value: '${nodeVersion}' });\n` +
        `Object.defineProperty(process, 'version', { value: 'v${nodeVersion}' });\n`,
    );
    writeFileSync(
      join(path, 'node'),
      `#!/bin/sh\nexec ${process.execPath} --require ${pretend} "$@"\n`,
    );
    chmodSync(join(path, 'node'), 0o755);
  }
  return path;
}
