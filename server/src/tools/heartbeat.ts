import type { ToolCall } from './define-tool.ts';

const HEARTBEAT_MS = 5_000;

/**
 * Runs `work` while sending a progress notification every few seconds (when the client asked
 * for progress): the user sees the call is alive, and the client's idle timer is reset.
 */
export async function withHeartbeat<T>(
  call: ToolCall,
  label: string,
  work: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    void call.reportProgress(`${label}: ${seconds} s`, seconds);
  }, HEARTBEAT_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
