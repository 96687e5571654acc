import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { withFileLock } from '../util/file-lock.ts';
import { isProcessAlive, processIdentity } from '../util/process-identity.ts';
import { parseJson } from '../util/read-json.ts';
import { statusDir } from './status-key.ts';

/**
 * `/clear` (and `/resume` inside a session) gives the conversation a new session id, which the
 * status line and the hooks are then given; the MCP server and the monitor keep running with
 * the id their Claude Code process started with, and the tasks they start carry that one. The
 * SessionStart hook links the two through the Claude Code process (`CLAUDE_PID`, pid and start
 * time), so the briefing and the status line still speak of that terminal's tasks.
 */
export interface SessionLinks {
  /** `<pid>:<start time>` of a Claude Code process → the session id it started with. */
  terminals: Record<string, string>;
  /** A first session id → the id of the conversation its terminal shows now. */
  current: Record<string, string>;
}

const sessionLinksPath = (dataHome: string) => join(statusDir(dataHome), 'session-links.json');

/** The links; none when the file is missing or unreadable. */
export function readSessionLinks(dataHome: string): SessionLinks {
  try {
    const links = parseJson(readFileSync(sessionLinksPath(dataHome), 'utf8')) as SessionLinks;
    return { terminals: { ...links.terminals }, current: { ...links.current } };
  } catch {
    return { terminals: {}, current: {} };
  }
}

/**
 * Records that the Claude Code process `claudePid` now shows `session`; returns the id that
 * process started with (its tasks carry it) and whether the links changed. Without a live
 * process to link through, `session` itself.
 */
export async function linkSession(
  dataHome: string,
  claudePid: number | undefined,
  session: string,
): Promise<{ first: string; isChanged: boolean }> {
  if (!claudePid || !isProcessAlive({ pid: claudePid, startTime: '' }))
    return { first: session, isChanged: false };
  const identity = processIdentity(claudePid);
  const key = `${identity.pid}:${identity.startTime}`;
  return withFileLock(
    join(statusDir(dataHome), 'session-links.lock'),
    () => {
      const links = readSessionLinks(dataHome);
      const before = JSON.stringify(links);
      for (const [terminal, id] of Object.entries(links.terminals)) {
        const [pid = '', startTime = ''] = terminal.split(':');
        if (isProcessAlive({ pid: Number(pid), startTime })) continue;
        delete links.terminals[terminal];
        delete links.current[id];
      }
      const first = links.terminals[key] ?? session;
      links.terminals[key] = first;
      if (first === session) delete links.current[first];
      else links.current[first] = session;
      const isChanged = JSON.stringify(links) !== before;
      if (isChanged) writeFileAtomicSync(sessionLinksPath(dataHome), `${JSON.stringify(links)}\n`);
      return Promise.resolve({ first, isChanged });
    },
    { timeoutMs: 2_000 },
  );
}
