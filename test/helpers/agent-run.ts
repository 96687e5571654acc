import { randomUUID } from 'node:crypto';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  runAgentLoop,
  type LoopHooks,
  type LoopOutcome,
} from '../../server/src/agent/agent-loop.ts';
import type { ContextPolicySettings } from '../../server/src/agent/context-policy.ts';
import { FILE_AND_SHELL_TOOLS } from '../../server/src/agent/worker-tools/index.ts';
import { workerEnv } from '../../server/src/sandbox/worker-env.ts';
import { createClient } from '../../server/src/providers/create-client.ts';
import { appendLedger } from '../../server/src/calls/ledger.ts';
import { configPath, credentialsPath, projectConfigPath } from '../../server/src/config/paths.ts';
import { jobDir } from '../../server/src/store/job-store.ts';
import { takeMessages } from '../../server/src/store/mailbox.ts';
import { settledFingerprint } from '../../server/src/util/file-fingerprint.ts';
import type { GenerateRequest, GenerateResult } from '../../server/src/wire/spec.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeReply,
  type RecordedRequest,
  type WireFormat,
} from './fake-provider.ts';

export interface ScriptedAgentRun {
  outcome: LoopOutcome;
  /** Every model request the fake provider received, in order. */
  requests: RecordedRequest[];
  /** Every activity the loop reported (onStep). */
  activities: string[];
  largestRequestBytes: number;
  /** Milliseconds from each reply leaving the fake to the loop's next request reaching it. */
  gapsMs: number[];
}

export interface ScriptedAgentOptions {
  /** The model's replies, by assistant turn. */
  steps: FakeReply[];
  /** The task directory the worker tools run in. */
  root: string;
  maxTurns: number;
  format?: WireFormat;
  contextPolicy?: ContextPolicySettings;
  continueAfterAnswer?: LoopHooks['continueAfterAnswer'];
}

/**
 * Runs the builtin agent loop in-process with the real worker tools in `root`, against a
 * fake provider (a real HTTP server on 127.0.0.1) that answers by assistant turn.
 */
export async function runScriptedAgent(options: ScriptedAgentOptions): Promise<ScriptedAgentRun> {
  const script = byAssistantTurn(options.steps);
  const gapsMs: number[] = [];
  let repliedAt: number | undefined;
  const fake = await startFakeProvider({
    respond: (request) => {
      if (repliedAt !== undefined) gapsMs.push(performance.now() - repliedAt);
      const reply = script(request);
      repliedAt = performance.now();
      return reply;
    },
  });
  const format = options.format ?? 'openai';
  const activities: string[] = [];
  try {
    const outcome = await runAgentAt({
      ...options,
      baseUrl: format === 'openai' ? fake.openaiBaseUrl : fake.url,
      format,
      onActivity: (activity) => activities.push(activity),
    });
    if (fake.unscripted.length > 0) throw new Error('the loop sent an unscripted request');
    const sizes = fake.requests.map((request) => Buffer.byteLength(request.rawBody));
    return {
      outcome,
      requests: fake.requests,
      activities,
      largestRequestBytes: Math.max(...sizes),
      gapsMs,
    };
  } finally {
    await fake.close();
  }
}

/**
 * What a task's model call must look at and write, whatever its bookkeeping, each for a promise
 * the product makes: job.json (a task ended from elsewhere stops), both config files and
 * credentials.json (a change takes effect at the next call), the mailbox (steering reaches the
 * next turn), and the call's ledger line before its answer is used (spending is never lost).
 * Done with the product's own functions, so this floor moves when they do.
 */
export interface GuaranteedLooks {
  dataHome: string;
  projectDir: string;
  taskId: string;
}

/**
 * The builtin agent loop with the real worker tools in `root`, against the model at `baseUrl`,
 * and nothing else: no job files, pools, ledger or events; with `looks`, only those. The bench
 * runs it in a process of its own too, for the floor of a turn across a process boundary.
 */
export function runAgentAt(
  options: Omit<ScriptedAgentOptions, 'steps'> & {
    baseUrl: string;
    onActivity?: (activity: string) => void;
    looks?: GuaranteedLooks;
  },
): Promise<LoopOutcome> {
  const client = createClient(options.format ?? 'openai', {
    baseUrl: options.baseUrl,
    model: 'worker-model',
  });
  const { looks } = options;
  return runAgentLoop({
    system: 'You are a worker.',
    task: 'Long task: read and run things.',
    tools: FILE_AND_SHELL_TOOLS,
    maxTurns: options.maxTurns,
    maxOutputTokens: 1_000,
    callModel: looks
      ? (request) => callWithLooks(request, (sent) => client.generate(sent), looks)
      : (request) => client.generate(request),
    toolContext: { root: realpathSync(options.root), env: workerEnv(process.env) },
    hooks: {
      onStep: (_step, activity) => options.onActivity?.(activity),
      askSupervisor: () => Promise.resolve('Carry on.'),
      takeSteering: () =>
        looks
          ? takeMessages(jobDir(looks.dataHome, looks.taskId), 'steer').map(({ text }) => text)
          : [],
      onFilesWritten: () => undefined,
      ...(options.continueAfterAnswer ? { continueAfterAnswer: options.continueAfterAnswer } : {}),
    },
    ...(options.contextPolicy ? { contextPolicy: options.contextPolicy } : {}),
  });
}

/** One model call with only the looks and the ledger line of {@link GuaranteedLooks}. */
async function callWithLooks(
  request: GenerateRequest,
  generate: (request: GenerateRequest) => Promise<GenerateResult>,
  { dataHome, projectDir, taskId }: GuaranteedLooks,
): Promise<GenerateResult> {
  for (const file of [
    join(jobDir(dataHome, taskId), 'job.json'),
    configPath(dataHome),
    projectConfigPath(projectDir),
    credentialsPath(dataHome),
  ])
    settledFingerprint(file);
  const started = Date.now();
  const result = await generate(request);
  await appendLedger(dataHome, {
    ts: new Date().toISOString(),
    callId: randomUUID(),
    profile: 'w',
    format: 'openai',
    modelAsked: 'worker-model',
    modelAnswered: result.modelAnswered,
    inputTokens: result.usage.inputTokens,
    outputTokens: result.usage.outputTokens,
    cachedInputTokens: result.usage.cachedInputTokens ?? 0,
    reasoningTokens: result.usage.reasoningTokens ?? 0,
    costUsd: 0,
    latencyMs: Date.now() - started,
    outcome: 'ok',
    attempts: result.attempts ?? 1,
    taskId,
    bytesSent: 0,
    supervisorTokensAvoided: 0,
  });
  return result;
}

export const LONG_RUN_TURNS = 60;

/**
 * The long-run script: `turns - 1` tool turns, alternating a read_file of a different ~40 KB
 * file and a run_bash whose output (~110 KB) is capped at 30 KB, then a final answer. Writes
 * the files it reads into `root`.
 */
export function longRunScript(root: string, turns = LONG_RUN_TURNS): FakeReply[] {
  mkdirSync(join(root, 'data'), { recursive: true });
  const steps: FakeReply[] = [];
  for (let turn = 0; turn < turns - 1; turn += 1) {
    if (turn % 2 === 0) {
      const file = `data/part-${turn}.txt`;
      writeFileSync(join(root, file), sampleText(turn, 40 * 1024));
      steps.push({ toolUses: [{ name: 'read_file', input: { path: file } }] });
    } else {
      const command = `seq ${turn} ${turn + 20_000}`;
      steps.push({ toolUses: [{ name: 'run_bash', input: { command } }] });
    }
  }
  steps.push({ text: 'Done: read every part and ran every command.' });
  return steps;
}

/** About `bytes` of deterministic text lines, distinct per `seed`. */
export function sampleText(seed: number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let index = 0; size < bytes; index += 1) {
    const line = `part ${seed} line ${index}: value=${(index * 7919 + seed) % 100_003} status=ok`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}
