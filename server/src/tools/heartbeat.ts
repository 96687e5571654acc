import type { ToolCall } from './define-tool.ts';

const HEARTBEAT_MS = 5_000;

/**
 * Runs `work` while sending a progress notification every few seconds (when the client asked
 * for progress): the user sees the call is alive, and the client's idle timer is reset. `work`
 * may say what it waits for instead (a full pool): that is sent at once, and until it says
 * undefined, in place of `label`.
 */
export async function withHeartbeat<T>(
  call: ToolCall,
  label: string,
  work: (waiting: (what: string | undefined) => void) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  let waitingFor: string | undefined;
  const beat = () => {
    const seconds = Math.round((Date.now() - started) / 1000);
    void call.reportProgress(waitingFor ?? `${label}: ${seconds} s`, seconds);
  };
  const timer = setInterval(beat, HEARTBEAT_MS);
  const waiting = (what: string | undefined) => {
    const isNew = what !== undefined && waitingFor === undefined;
    waitingFor = what;
    if (isNew) beat();
  };
  try {
    return await work(waiting);
  } finally {
    clearInterval(timer);
  }
}
