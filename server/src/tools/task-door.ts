import type { AppContext } from '../profiles/app-context.ts';
import type { JobFile } from '../store/job-file.ts';
import { errorMessage } from '../util/user-error.ts';
import {
  checkNoNulBytes,
  userQuestionForm,
  type Services,
  type ToolRun,
  type UserForm,
} from './define-tool.ts';
import { runTaskStart, type TaskStartInput } from './task-start.ts';

/**
 * The second door to the tasks: the MCP tasks extension (`io.modelcontextprotocol/tasks`, protocol
 * 2026-07-28) as Claude Code's interactive CLI speaks it. The same jobs, the same start, answer
 * and cancel paths as the `task_*` tools; only the shapes differ (docs/design/native-mcp-tasks.md,
 * §3). The JSON-RPC framing is the dual-era transport's (`server/src/dual-era.ts`).
 */

/** What the worker reads when the user declines (or dismisses) the question's form. */
export const DECLINED_ANSWER = 'The user declined to answer; proceed on your own judgement.';

/** A task as the extension's `tasks/get` returns it (`DetailedTask`). */
export interface NativeTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Jobs are kept until task_cleanup: no expiry. */
  ttlMs: null;
  pollIntervalMs: number;
  inputRequests?: Record<string, InputRequest>;
  result?: { content: Array<{ type: 'text'; text: string }>; isError: boolean };
}

/** A question as `input_required` carries it: the same form the legacy door elicits. */
export interface InputRequest {
  method: 'elicitation/create';
  params: UserForm;
}

/** One answer in `tasks/update`'s `inputResponses` (an `ElicitResult` of that form). */
export interface InputResponse {
  action?: string;
  content?: { value?: unknown };
}

/** A JSON-RPC error for the transport to answer with (`-32602` for an unknown task). */
export class TaskRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface TaskDoor {
  /** Runs task_start (same checks and errors) and returns the job as a fresh task. */
  start(input: TaskStartInput, call: ToolRun['call']): Promise<{ task: NativeTask; text: string }>;
  get(taskId: unknown): Promise<NativeTask>;
  update(taskId: unknown, inputResponses: unknown): Promise<void>;
  cancel(taskId: unknown): Promise<void>;
}

export interface TaskDoorDependencies {
  context: AppContext;
  services: () => Promise<Services>;
  /** How often Claude Code should poll `tasks/get` (it clamps to 250–30000 ms). */
  pollIntervalMs: number;
}

/** The task door over the job store. */
export function createTaskDoor({
  context,
  services,
  pollIntervalMs,
}: TaskDoorDependencies): TaskDoor {
  const { dataHome } = context;
  // Claude Code sends tasks/cancel twice, 1 ms apart: the second waits for the first.
  const cancelling = new Map<string, Promise<void>>();
  const shape = (job: JobFile, statusMessage: string) => ({
    taskId: job.id,
    statusMessage,
    createdAt: job.createdAt,
    lastUpdatedAt: job.updatedAt,
    ttlMs: null,
    pollIntervalMs,
  });
  return {
    async start(input, call) {
      checkNoNulBytes('task_start', input);
      const loaded = await services();
      const { job, text } = await runTaskStart(
        input,
        { context, services: loaded, call },
        { nativeTask: true },
      );
      return { task: await describe(loaded, await loaded.getTask(dataHome, job.id)), text };
    },
    async get(taskId) {
      const loaded = await services();
      return describe(loaded, await findJob(loaded, taskId));
    },
    async update(taskId, inputResponses) {
      const loaded = await services();
      const job = await findJob(loaded, taskId);
      const question = outstandingQuestion(loaded, job);
      const response = (inputResponses as Record<string, InputResponse> | undefined)?.[
        question?.key ?? ''
      ];
      // Keys that are not outstanding (answered already, or never asked) are ignored.
      if (!question || !response) return;
      const answer =
        response.action === 'accept' && typeof response.content?.value === 'string'
          ? response.content.value
          : DECLINED_ANSWER;
      // As task_answer does: to the mailbox of each job showing the question.
      for (const target of question.targets) {
        await loaded.postMessage(loaded.jobDir(dataHome, target.id), 'answer', answer);
        loaded.appendEvent(dataHome, target.id, 'answered', answer);
      }
    },
    async cancel(taskId) {
      const loaded = await services();
      const job = await findJob(loaded, taskId);
      const running =
        cancelling.get(job.id) ??
        loaded
          .cancelTask(dataHome, job.id)
          .then(() => undefined)
          .finally(() => cancelling.delete(job.id));
      cancelling.set(job.id, running);
      await running;
    },
  };

  /** The job → task mapping of docs/design/native-mcp-tasks.md §3. */
  async function describe(loaded: Services, job: JobFile): Promise<NativeTask> {
    const line = loaded.statusLine(job);
    switch (job.state) {
      case 'cancelled':
        return { ...shape(job, job.stopRequested ?? line), status: 'cancelled' };
      case 'done':
      case 'failed':
      case 'timeout':
      case 'lost':
        return {
          ...shape(job, line),
          status: 'completed',
          result: {
            content: [{ type: 'text', text: await resultOf(loaded, job) }],
            isError: job.state !== 'done',
          },
        };
      case 'needs_input': {
        const question = outstandingQuestion(loaded, job);
        if (question)
          return {
            ...shape(job, line),
            status: 'input_required',
            inputRequests: { [question.key]: questionForm(question.text) },
          };
        return { ...shape(job, line), status: 'working' };
      }
      default:
        return { ...shape(job, line), status: 'working' };
    }
  }

  /** task_result's text (the task is marked reviewed: the result reaches the session now). */
  async function resultOf(loaded: Services, job: JobFile): Promise<string> {
    try {
      return (await loaded.reviewTask(dataHome, job.id)).text;
    } catch (error) {
      return `${loaded.statusLine(job)}\nIts result cannot be read: ${errorMessage(error)}`;
    }
  }

  async function findJob(loaded: Services, taskId: unknown): Promise<JobFile> {
    if (typeof taskId !== 'string' || taskId === '')
      throw new TaskRequestError(-32602, 'taskId must be a non-empty string');
    try {
      return await loaded.getTask(dataHome, taskId);
    } catch (error) {
      throw new TaskRequestError(-32602, `Unknown task ${taskId}: ${errorMessage(error)}`);
    }
  }

  /**
   * The question waiting for the user, keyed `<job>.q<n>` (the n-th question of the job that
   * asks it): unique over the task's life, as the extension requires. None once answered, so
   * the form is not shown again while the worker picks the answer up.
   */
  function outstandingQuestion(
    loaded: Services,
    job: JobFile,
  ): { key: string; text: string; targets: JobFile[] } | undefined {
    const targets = job.attempts ? loaded.messageTargets(dataHome, job) : [job];
    const asking = targets[0];
    if (!asking || asking.state !== 'needs_input') return undefined;
    let asked = 0;
    let answered = false;
    for (const event of loaded.readEvents(dataHome, asking.id, Number.MAX_SAFE_INTEGER)) {
      if (event.type === 'question') [asked, answered] = [asked + 1, false];
      else if (event.type === 'answered') answered = true;
    }
    if (asked === 0 || answered) return undefined;
    // A task run as attempts shows the question tagged with the attempt that asks it.
    return { key: `${asking.id}.q${asked}`, text: job.question ?? asking.question ?? '', targets };
  }
}

function questionForm(message: string): InputRequest {
  return {
    method: 'elicitation/create',
    params: userQuestionForm({
      message,
      title: 'Answer',
      description: 'Your answer to the worker',
    }),
  };
}
