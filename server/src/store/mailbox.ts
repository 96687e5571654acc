import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { parseJson } from '../util/read-json.ts';

/** Messages from the supervisor to a running worker: an answer to its question, or steering. */
export interface MailboxMessage {
  kind: 'answer' | 'steer';
  text: string;
  sentAt: string;
}

const mailboxDir = (jobDirectory: string) => join(jobDirectory, 'mailbox');

export async function postMessage(
  jobDirectory: string,
  kind: MailboxMessage['kind'],
  text: string,
): Promise<void> {
  const sentAt = new Date().toISOString();
  // Names sort by time, so the worker reads messages in the order they were sent.
  const name = `${sentAt.replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.json`;
  await writeFileAtomic(
    join(mailboxDir(jobDirectory), name),
    JSON.stringify({ kind, text, sentAt }),
  );
}

/** Takes (reads and removes) the waiting messages, oldest first; only `kind` when given. */
export function takeMessages(
  jobDirectory: string,
  kind?: MailboxMessage['kind'],
): MailboxMessage[] {
  let names: string[];
  try {
    names = readdirSync(mailboxDir(jobDirectory))
      .filter((name) => name.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(mailboxDir(jobDirectory), name);
    try {
      const message = parseJson(readFileSync(path, 'utf8')) as MailboxMessage;
      if (kind && message.kind !== kind) return [];
      rmSync(path, { force: true });
      return [message];
    } catch {
      return [];
    }
  });
}
