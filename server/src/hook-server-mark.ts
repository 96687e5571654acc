import { mkdir, readFileSync, unlinkSync, writeFile } from 'node:fs';
import { join } from 'node:path';
import { hookServersDir } from './config/paths.ts';

/**
 * Marks this server as the one answering the `mcp_tool` hooks of the client process `clientPid`
 * (hooks/fallback.sh reads it); returns what removes the mark. Best effort: without a mark the
 * command hooks run as well, and decide the same. Written off the main thread, beside the
 * client's first messages (a hook comes with a tool call, later), not before them: the start's
 * answer to `initialize` does not wait for two file system calls.
 */
export function markHookServer(dataHome: string, clientPid: number, pid: number): () => void {
  const path = join(hookServersDir(dataHome), String(clientPid));
  let isEnded = false;
  const unmark = () => {
    isEnded = true;
    try {
      // A server started since for the same client has written its own pid: leave that one.
      if (readFileSync(path, 'utf8').trim() === String(pid)) unlinkSync(path);
    } catch {
      // Already gone, or not written yet.
    }
  };
  mkdir(hookServersDir(dataHome), { recursive: true, mode: 0o700 }, (error) => {
    if (error || isEnded) return;
    // Ended while the mark was being written: it goes as soon as it is there.
    writeFile(path, `${pid}\n`, { mode: 0o600 }, () => isEnded && unmark());
  });
  return unmark;
}
