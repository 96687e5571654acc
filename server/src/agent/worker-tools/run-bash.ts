import { defineWorkerTool } from './define-worker-tool.ts';
import { runCommand, type CommandOutcome } from './run-command.ts';
import { inputObject, optionalNumber, requiredString } from './tool-input.ts';
import type { WorkerToolResult } from './types.ts';

const DEFAULT_TIMEOUT_S = 120;
const MAX_TIMEOUT_S = 600;

export const runBashTool = defineWorkerTool({
  name: 'run_bash',
  description:
    'Run a command with `bash -c` in the task directory (stdin closed). Returns stdout and stderr ' +
    'combined (long output keeps its head and tail) and the exit code. Times out after 120 s ' +
    'unless timeout_s says otherwise (at most 600); then the command and all it started are killed. ' +
    'In the OS sandbox, commands write only in the task directory and $TMPDIR, have no network beyond ' +
    'allowed hosts, and git cannot commit: your work is committed for you when you finish.',
  inputSchema: {
    type: 'object',
    properties: {
      command: {
        type: 'string',
        description: 'The bash command line, e.g. "npm test 2>&1 | tail -50".',
      },
      timeout_s: {
        type: 'number',
        minimum: 1,
        maximum: MAX_TIMEOUT_S,
        description: `Timeout in seconds (default ${DEFAULT_TIMEOUT_S}, at most ${MAX_TIMEOUT_S}).`,
      },
    },
    required: ['command'],
    additionalProperties: false,
  },
  isReadOnly: false,
  run: async (input, context) => {
    const fields = inputObject(input, 'run_bash');
    const command = requiredString(fields, 'command');
    const requested = optionalNumber(fields, 'timeout_s', { min: 1 }) ?? DEFAULT_TIMEOUT_S;
    const timeoutS = Math.min(requested, MAX_TIMEOUT_S);
    const outcome = await runCommand(command, context, timeoutS * 1000);
    return formatOutcome(outcome, timeoutS, requested > MAX_TIMEOUT_S);
  },
});

/** Output first, status last: the text always ends with `exit code N` or the signal. */
function formatOutcome(
  outcome: CommandOutcome,
  timeoutS: number,
  wasCapped: boolean,
): WorkerToolResult {
  const lines: string[] = [];
  if (wasCapped) lines.push(`[timeout_s capped at ${MAX_TIMEOUT_S}]`);
  if (outcome.ending === 'timed-out') {
    lines.push(
      `Timed out after ${timeoutS} s: the command and every process it started were killed. ` +
        `Split the work, or raise timeout_s (at most ${MAX_TIMEOUT_S}).`,
    );
  }
  if (outcome.ending === 'aborted') {
    lines.push('Cancelled: the command and every process it started were killed.');
  }
  if (outcome.ending === 'dropped') {
    lines.push(
      outcome.exitCode === null
        ? 'The connection to the runner dropped while the command ran: it was stopped there once the runner answered again. Run it again if you still need it.'
        : 'The connection to the runner dropped before all of the output arrived: the command had ended there (its exit code is below) and its changes came back. Run it again if you need the whole output.',
    );
  }
  lines.push(outcome.output === '' ? '(no output)' : outcome.output.replace(/\n$/, ''));
  if (outcome.hadLeftovers) {
    lines.push('[background processes still running when the command ended were killed]');
  }
  lines.push(
    outcome.signal ? `killed by signal ${outcome.signal}` : `exit code ${outcome.exitCode ?? '?'}`,
  );
  const isError = outcome.ending !== 'exited';
  const filesWritten = outcome.filesChanged?.length ? { filesWritten: outcome.filesChanged } : {};
  return { content: lines.join('\n'), ...(isError ? { isError } : {}), ...filesWritten };
}
