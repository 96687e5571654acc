import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { folderNames } from '../util/file-fingerprint.ts';
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

/**
 * Takes (reads and removes) the waiting messages, oldest first; only `kind` when given. A running
 * task looks every turn: while its mailbox folder is as it was (or absent), that is a stat.
 */
export function takeMessages(
  jobDirectory: string,
  kind?: MailboxMessage['kind'],
): MailboxMessage[] {
  const names = folderNames(mailboxDir(jobDirectory)).filter((name) => name.endsWith('.json'));
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
