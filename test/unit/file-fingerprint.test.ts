import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  COARSE_SETTLE_MS,
  FINE_SETTLE_MS,
  folderNames,
  hasSettled,
  settledFingerprint,
} from '../../server/src/util/file-fingerprint.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-fingerprint-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A modification time in whole milliseconds. */
const WRITTEN_AT = new Date('2026-01-02T03:04:05.678Z');
/** The modification time (ns) a test's file had before its change. */
let writtenNs = 0n;

/** Long enough for any change stamped now to have settled on this machine's file system. */
const settle = () => sleep(FINE_SETTLE_MS + 50);

describe('settledFingerprint: a cache of a file reuses what it read only while the file is as it was', () => {
  // Every way a file can change under a reader. Each must change the fingerprint, or leave it
  // unsettled (undefined) until the change is old enough to be told apart from the next one.
  const changes: Array<[name: string, change: (path: string) => void]> = [
    ['rewritten in place, same size', (path) => writeFileSync(path, '{"model":"b"}')],
    [
      'replaced (written beside it, renamed over it)',
      (path) => {
        writeFileSync(`${path}.tmp`, '{"model":"b"}');
        renameSync(`${path}.tmp`, path);
      },
    ],
    [
      'rewritten with its old times put back',
      (path) => {
        writeFileSync(path, '{"model":"b"}');
        // Same inode, same size, same modification time as before: only the change time tells.
        utimesSync(path, WRITTEN_AT, WRITTEN_AT);
        expect(statSync(path, { bigint: true }).mtimeNs).toBe(writtenNs);
      },
    ],
    ['made unreadable', (path) => chmodSync(path, 0o000)],
    ['removed', (path) => rmSync(path)],
    [
      'removed and written again, same size',
      (path) => {
        rmSync(path);
        writeFileSync(path, '{"model":"b"}');
      },
    ],
  ];
  it.each(changes)('%s', async (_name, change) => {
    const path = join(dir, 'config.json');
    writeFileSync(path, '{"model":"a"}');
    // A modification time a change can put back exactly (utimes has millisecond steps).
    utimesSync(path, WRITTEN_AT, WRITTEN_AT);
    writtenNs = statSync(path, { bigint: true }).mtimeNs;
    // Just written: not to be trusted yet.
    expect(settledFingerprint(path)).toBeUndefined();
    await settle();
    const before = settledFingerprint(path);
    expect(before).toMatch(/^\d+:\d+:\d+:\d+:\d+$/);
    // Unchanged: the same.
    expect(settledFingerprint(path)).toBe(before);
    change(path);
    expect(settledFingerprint(path)).not.toBe(before);
    await settle();
    const after = settledFingerprint(path);
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
  });

  it('tells a missing file apart, and never fingerprints what is not of the kind asked', async () => {
    expect(settledFingerprint(join(dir, 'none.json'))).toBe('absent');
    mkdirSync(join(dir, 'folder'));
    writeFileSync(join(dir, 'file'), 'x');
    await settle();
    expect(settledFingerprint(join(dir, 'folder'))).toBeUndefined();
    expect(settledFingerprint(join(dir, 'folder'), 'folder')).toBeDefined();
    expect(settledFingerprint(join(dir, 'file'), 'folder')).toBeUndefined();
  });

  it('waits longer for times in whole seconds (coarse file systems), and never trusts a time ahead', () => {
    const at = (ms: number, ns = 0n) => BigInt(ms) * 1_000_000n + ns;
    const now = 1_800_000_000_000;
    // A fine stamp: settled after FINE_SETTLE_MS.
    expect(hasSettled(at(now - FINE_SETTLE_MS, 123n), now)).toBe(true);
    expect(hasSettled(at(now - FINE_SETTLE_MS + 1, 123n), now)).toBe(false);
    // Whole seconds: after COARSE_SETTLE_MS only.
    const second = Math.floor(now / 1000) * 1000 - 1000;
    expect(hasSettled(at(second), second + FINE_SETTLE_MS * 2)).toBe(false);
    expect(hasSettled(at(second), second + COARSE_SETTLE_MS)).toBe(true);
    expect(hasSettled(at(now + 5_000, 7n), now)).toBe(false);
  });
});

describe('folderNames: a folder is listed again when an entry comes or goes', () => {
  it('lists sorted, reuses the listing while the folder is settled, and sees every change at once', async () => {
    const folder = join(dir, 'pool');
    expect(folderNames(folder)).toEqual([]);
    mkdirSync(folder);
    writeFileSync(join(folder, '1.json'), '{}');
    writeFileSync(join(folder, '0.json'), '{}');
    expect(folderNames(folder)).toEqual(['0.json', '1.json']);
    await settle();
    const settled = folderNames(folder);
    // Settled and unchanged: the listing is reused, not made again.
    expect(folderNames(folder)).toBe(settled);
    // Each kind of change shows at the very next look.
    writeFileSync(join(folder, 'wait-1-1.json'), '{}');
    expect(folderNames(folder)).toEqual(['0.json', '1.json', 'wait-1-1.json']);
    await settle();
    folderNames(folder);
    renameSync(join(folder, 'wait-1-1.json'), join(folder, 'wait-2-1.json'));
    expect(folderNames(folder)).toEqual(['0.json', '1.json', 'wait-2-1.json']);
    await settle();
    folderNames(folder);
    rmSync(join(folder, 'wait-2-1.json'));
    expect(folderNames(folder)).toEqual(['0.json', '1.json']);
    await settle();
    folderNames(folder);
    rmSync(folder, { recursive: true });
    expect(folderNames(folder)).toEqual([]);
  });
});
