import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookServersDir } from './config/paths.ts';

/**
 * Marks this server as the one answering the `mcp_tool` hooks of the client process `clientPid`
 * (hooks/fallback.sh reads it); returns what removes the mark. Best effort: without a mark the
 * command hooks run as well, and decide the same.
 */
export function markHookServer(dataHome: string, clientPid: number, pid: number): () => void {
  const path = join(hookServersDir(dataHome), String(clientPid));
  try {
    mkdirSync(hookServersDir(dataHome), { recursive: true, mode: 0o700 });
    writeFileSync(path, `${pid}\n`, { mode: 0o600 });
  } catch {
    return () => undefined;
  }
  return () => {
    try {
      // A server started since for the same client has written its own pid: leave that one.
      if (readFileSync(path, 'utf8').trim() === String(pid)) unlinkSync(path);
    } catch {
      // Already gone.
    }
  };
}
