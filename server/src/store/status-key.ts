import { join } from 'node:path';

/** CRC table of POSIX `cksum` (polynomial 0x04C11DB7, most significant bit first). */
const CKSUM_TABLE: readonly number[] = Array.from({ length: 256 }, (_, index) => {
  let crc = index << 24;
  for (let bit = 0; bit < 8; bit += 1) {
    crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
});

function step(crc: number, byte: number): number {
  return ((crc << 8) ^ (CKSUM_TABLE[((crc >>> 24) ^ byte) & 0xff] ?? 0)) >>> 0;
}

/** What POSIX `cksum` prints for these bytes: the CRC (length appended, complemented) and the length. */
export function posixCksum(bytes: Uint8Array): { crc: number; length: number } {
  let crc = 0;
  for (const byte of bytes) crc = step(crc, byte);
  for (let rest = bytes.length; rest > 0; rest = Math.floor(rest / 256))
    crc = step(crc, rest & 0xff);
  return { crc: ~crc >>> 0, length: bytes.length };
}

/**
 * The file name stem of a project's files in `status/` (the monitor's record, locks):
 * `<crc>-<bytes>` of POSIX `cksum` over the UTF-8 path and a newline.
 */
export function projectStatusKey(project: string): string {
  const { crc, length } = posixCksum(Buffer.from(`${project}\n`, 'utf8'));
  return `${crc}-${length}`;
}

/** `<dataHome>/status/`: the pre-rendered status lines and the monitor's records. */
export function statusDir(dataHome: string): string {
  return join(dataHome, 'status');
}

/**
 * Every project's pre-rendered status line, in one small file the sh reader scans with
 * builtins only: a `clock` line, then `<expires epoch s> <project real path><TAB><text>` per part.
 */
export function statusLinesPath(dataHome: string): string {
  return join(statusDir(dataHome), 'lines');
}

/** What the monitor has announced for a project, so a restarted watcher never repeats a line. */
export function announcedPath(dataHome: string, project: string): string {
  return join(statusDir(dataHome), `${projectStatusKey(project)}.announced.json`);
}
