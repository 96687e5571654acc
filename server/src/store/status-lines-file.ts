import { inertLine } from '../util/inert-text.ts';
import { plural } from '../util/plural.ts';
import type { BootClock, StatusSegment } from './render-status.ts';

/** The marker line saying the file has per-session lines (the readers then use only those). */
const SESSIONS_MARKER = 'sessions';
/** The session key of tasks no Claude Code session started (a terminal, an older plugin). */
export const NO_SESSION_KEY = '-';

/**
 * The key a task's session has in the status lines file: the id itself when it is one word the
 * readers can match with builtins (Claude Code's are UUIDs), else `-` like a task of no session.
 */
export function statusSessionKey(session: string | undefined): string {
  return session !== undefined && /^[\w.-]{1,128}$/.test(session) ? session : NO_SESSION_KEY;
}

/**
 * The status lines file the readers scan, in this order:
 * - `clock <boot id> <boot epoch>` (optional), so the sh reader needs no `date` process on Linux;
 * - `sessions`, when `bySession` is given: readers told a session id use only the session lines;
 * - `session <key> <expires> <project><TAB><text>` per part of one session's own line;
 * - `<expires> <project><TAB><text>` per part of a project's whole line (every task of it), for
 *   readers told no session id and for readers copied by an older plugin, which skip the lines
 *   above. Last, so a reader told a session id stops at the first of them.
 * Projects whose path holds a tab or a newline cannot be told apart in it and are left out.
 */
export function formatStatusLines(
  segmentsByProject: ReadonlyMap<string, readonly StatusSegment[]>,
  clock: BootClock | undefined,
  bySession?: ReadonlyMap<string, ReadonlyMap<string, readonly StatusSegment[]>>,
): string {
  const lines = clock ? [`clock ${clock.bootId} ${clock.bootEpoch}`] : [];
  if (bySession) lines.push(SESSIONS_MARKER);
  const keyed = (project: string) => !/[\t\n\r]/.test(project);
  for (const [project, sessions] of bySession ?? []) {
    if (!keyed(project)) continue;
    for (const [session, segments] of sessions) {
      const key = statusSessionKey(session);
      for (const segment of segments) lines.push(`session ${key} ${partLine(segment, project)}`);
    }
  }
  for (const [project, segments] of segmentsByProject) {
    if (!keyed(project)) continue;
    for (const segment of segments) lines.push(partLine(segment, project));
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

function partLine(segment: StatusSegment, project: string): string {
  return `${segment.expiresAt} ${project}\t${inertLine(segment.text.trim(), 200)}`;
}

/**
 * What the readers print for `project` at `nowMs`: with no `session`, the fresh parts of the
 * project's whole line; with one, the fresh parts of that session's own tasks, then how many
 * other sessions have fresh parts ("+2 other sessions"); '' when there is nothing.
 */
export function freshStatusText(
  file: string,
  project: string,
  nowMs: number,
  session?: string,
): string {
  const now = Math.floor(nowMs / 1000);
  const lines = file.split('\n');
  // The readers take only an id they can match, as the writer keys them.
  const isSession = statusSessionKey(session) !== NO_SESSION_KEY;
  const isSplit = isSession && lines.includes(SESSIONS_MARKER);
  const own: string[] = [];
  const others = new Set<string>();
  for (const line of lines) {
    const tagged = /^session (\S+) (.*)$/s.exec(line);
    if (Boolean(tagged) !== isSplit) continue;
    const part = freshPart(tagged ? tagged[2]! : line, project, now);
    if (part === undefined) continue;
    if (!tagged || tagged[1] === session) own.push(part);
    else others.add(tagged[1]!);
  }
  if (others.size > 0) own.push(`+${plural(others.size, 'other session')}`);
  return own.length ? `delegate: ${own.join(' | ')}` : '';
}

/** The text of an `<expires> <project><TAB><text>` part of `project` still fresh at `now`. */
function freshPart(line: string, project: string, now: number): string | undefined {
  const space = line.indexOf(' ');
  const tab = line.indexOf('\t');
  const expires = Number(line.slice(0, space));
  const isFresh = space > 0 && tab > space && Number.isInteger(expires) && expires > now;
  return isFresh && line.slice(space + 1, tab) === project ? line.slice(tab + 1) : undefined;
}
