import { formatBytes } from '../util/format-bytes.ts';

export const DELEGATE_TOOL = 'mcp__plugin_delegate_workers__delegate';

/** The call to make instead, spelled out so the model can copy it. */
export function delegateCall(path: string): string {
  return `call ${DELEGATE_TOOL} with {"task": "<what you need from this file>", "files": [${JSON.stringify(path)}]} (the worker reads the file; you get only its answer)`;
}

export function readReason(
  path: string,
  size: number,
  thresholdBytes: number,
  sliceLines: number,
): string {
  return (
    `${path} is ${formatBytes(size)}, over the ${formatBytes(thresholdBytes)} large-read limit of the delegate plugin, ` +
    `so reading it whole would fill your context. Instead ${delegateCall(path)}; or Read a slice with offset/limit ` +
    `(e.g. offset: 1, limit: ${sliceLines}); or Grep it for what you need.`
  );
}

export function bashReason(
  reader: string,
  path: string,
  size: number,
  thresholdBytes: number,
): string {
  return (
    `\`${reader}\` would print all of ${path} (${formatBytes(size)}, over the ${formatBytes(thresholdBytes)} ` +
    `large-read limit of the delegate plugin) into your context. Instead ${delegateCall(path)}; or bound the ` +
    `output in bytes (\`| head -c 8000\`, \`grep -m 50 PATTERN\`).`
  );
}
