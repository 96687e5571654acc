import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cliIdleTimeout,
  hardTimeout,
  idleTimeout,
  noSlot,
} from '../../server/src/tasks/stop-messages.ts';

const SERVER_SRC = join(import.meta.dirname, '..', '..', 'server', 'src');

/** Every way a task stops on a limit, with the next step it must name. */
const MESSAGES: Array<[string, string, RegExp]> = [
  ['hard timeout', hardTimeout({ timeoutS: 60 }), /larger timeout_s/],
  [
    'idle timeout',
    idleTimeout({ idleTimeoutS: 300, activity: 'thinking', profile: 'local', modelAnswered: 'm' }),
    /delegate doctor.*raise "idleTimeoutS" in profile local/,
  ],
  [
    'a CLI idle timeout',
    cliIdleTimeout('codex', 120, 'cx'),
    /Run codex by hand.*"idleTimeoutS" in profile cx/,
  ],
  ['no slot', noSlot('cli:codex', 1800), /task_status.*task_cancel.*"pool".*"maxTasks"/],
];

describe('a task stopped on a limit says what to do next', () => {
  for (const [what, message, next] of MESSAGES) {
    it(what, () => {
      expect(message).toMatch(next);
      // Where the work is, when there was work.
      if (what !== 'no slot') expect(message).toContain('task_result');
    });
  }

  it('no such message is built anywhere else', () => {
    const files = (readdirSync(SERVER_SRC, { recursive: true }) as string[]).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('stop-messages.ts'),
    );
    const built = files.filter((file) =>
      /[`'"](?:hard timeout|idle timeout):|slot came free in time/.test(
        readFileSync(join(SERVER_SRC, file), 'utf8'),
      ),
    );
    expect(built).toEqual([]);
  });
});
