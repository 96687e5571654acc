// Explore: the supervisor-side tokens and cost of one Explore-style question answered by Claude
// Code's own subagent (A) and by a delegate worker through the plugin's mod (B). The real Claude
// Code CLI runs both, offline against fake providers; the input figures are what the fake
// supervisor API received. Run alone with `node bench/explore.mjs`; `npm run bench` runs it too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_CLI_VERSION } from '../scripts/install-claude-cli.mjs';
import { makeShop } from './explore-project.mjs';
import { loadSource, loadTestHelper } from './lib.mjs';

const AGENT_ID = 'x-claude-code-agent-id';
const QUESTION = 'Where are refunds handled, and what happens to an unpaid order?';
const MAIN_ANSWER =
  'Refunds are handled by refundOrder in src/billing/settlement.ts; an unpaid order is cancelled after 48 hours by expireUnpaidOrders, and its stock is released.';

export async function benchExplore(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-explore-'));
  try {
    const helpers = await loadHelpers(root, temp);
    const a = await runOnce(helpers, root, false);
    const b = await runOnce(helpers, root, true);
    return await section(a, b);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** The test helpers and the ledger reader the runs use, bundled from TypeScript. */
async function loadHelpers(root, temp) {
  return {
    ...(await loadTestHelper(root, temp, 'fake-provider')),
    ...(await loadTestHelper(root, temp, 'claude-cli')),
    ...(await loadTestHelper(root, temp, 'temp-env')),
    ...(await loadSource(root, temp, 'server/src/calls/ledger.ts')),
  };
}

/** The scripted replies: the main loop's, Claude's subagent's, the worker's (same reads, same report). */
function scriptsFor(shop) {
  const agent = {
    name: 'Agent',
    input: {
      description: 'Find refunds and unpaid orders',
      prompt: QUESTION,
      subagent_type: 'Explore',
      run_in_background: false,
    },
  };
  const reads = (name, input) => ({
    toolUses: shop.files.map((file) => ({ name, input: input(file) })),
  });
  return {
    main: [{ toolUses: [agent] }, { text: MAIN_ANSWER }],
    subagent: [
      { toolUses: [{ name: 'Grep', input: shop.claudeGrep }] },
      reads('Read', (file) => ({ file_path: file.abs })),
      { text: shop.report },
    ],
    worker: [
      { toolUses: [{ name: 'grep', input: { pattern: shop.workerGrep } }] },
      reads('read_file', (file) => ({ path: file.rel })),
      { text: shop.report },
    ],
  };
}

/** What a scripted reply has the model produce: its text and each tool call's name and input. */
const producedBytes = (steps) =>
  steps.reduce(
    (sum, step) =>
      sum +
      bytes(step.text ?? '') +
      (step.toolUses ?? []).reduce(
        (all, use) => all + bytes(use.name + JSON.stringify(use.input)),
        0,
      ),
    0,
  );

/** One `claude -p` run of the question: A (onWorker false) or B (Explore mapped to a worker). */
async function runOnce(helpers, root, onWorker) {
  const { byAssistantTurn, createTempEnv, readLedger, runClaude, startFakeProvider } = helpers;
  const world = createTempEnv();
  const shop = makeShop(world);
  const scripts = scriptsFor(shop);
  const main = byAssistantTurn(scripts.main);
  const sub = byAssistantTurn(scripts.subagent);
  const supervisor = await startFakeProvider({
    respond: (request) => (isSub(request) ? sub : main)(request),
  });
  const worker = await startFakeProvider({ respond: byAssistantTurn(scripts.worker) });
  try {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: worker.openaiBaseUrl, model: 'm', local: true } },
      ...(onWorker ? { subagents: { Explore: 'w' } } : {}),
    });
    const run = await runClaude({
      prompt: QUESTION,
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: root,
      allowedTools: ['Agent', 'Grep', 'Read'],
      env: {
        DELEGATE_HOME: world.dataHome,
        DELEGATE_DISCOVERY_URLS_FOR_TEST: world.env.DELEGATE_DISCOVERY_URLS_FOR_TEST,
      },
      timeoutMs: 180_000,
    });
    const subagentRan = supervisor.requests.some(isSub);
    if (
      run.exitCode !== 0 ||
      !String(run.result?.result).includes(MAIN_ANSWER) ||
      supervisor.unscripted.length > 0 ||
      subagentRan === onWorker
    ) {
      throw new Error(
        `claude -p (${onWorker ? 'B' : 'A'}) did not run as scripted: ${run.stderr.slice(-800)}`,
      );
    }
    return {
      requests: supervisor.requests,
      outputBytes: producedBytes([...scripts.main, ...(onWorker ? [] : scripts.subagent)]),
      worker: onWorker ? workerFigures(worker.requests, readLedger(world.dataHome)) : undefined,
      project: shop,
      files: filesRead(onWorker ? worker.requests : supervisor.requests.filter(isSub), world),
    };
  } finally {
    await supervisor.close();
    await worker.close();
    world.cleanup();
  }
}

const bytes = (text) => Buffer.byteLength(text);
const isSub = (request) => request.headers[AGENT_ID] !== undefined;
const bodyBytes = (requests) => requests.reduce((sum, request) => sum + bytes(request.rawBody), 0);
const tokens = (count) => Math.ceil(count / 4);

/** Paths the explorer's read calls named, from its last request (Claude's Read or the worker's read_file). */
function filesRead(requests, world) {
  const last = requests.at(-1)?.body?.messages ?? [];
  const paths = last.flatMap((message) => [
    ...(Array.isArray(message.content) ? message.content : [])
      .filter((block) => block.type === 'tool_use' && block.name === 'Read')
      .map((block) => block.input.file_path.slice(world.project.length + 1)),
    ...(message.tool_calls ?? [])
      .filter((call) => call.function.name === 'read_file')
      .map((call) => JSON.parse(call.function.arguments).path),
  ]);
  return paths.sort().join(', ');
}

function workerFigures(requests, ledger) {
  const calls = ledger.filter((record) => record.kind === 'subagent');
  const sum = (field) => calls.reduce((total, record) => total + record[field], 0);
  return {
    calls: calls.length,
    input: sum('inputTokens'),
    output: sum('outputTokens'),
    cost: sum('costUsd'),
    bodyBytes: bodyBytes(requests),
  };
}

/** The text of the Agent call's tool_result in the main loop's last request. */
function agentResult(requests) {
  const messages = requests.filter((request) => !isSub(request)).at(-1).body.messages;
  const blocks = messages.flatMap((message) =>
    Array.isArray(message.content) ? message.content : [],
  );
  const call = blocks.find((block) => block.type === 'tool_use' && block.name === 'Agent');
  const result = blocks.find(
    (block) => block.type === 'tool_result' && block.tool_use_id === call.id,
  );
  const { content } = result;
  return typeof content === 'string' ? content : content.map((part) => part.text ?? '').join('');
}

/** Bytes of delegate's own MCP tool definitions in a request. */
const pluginTools = (request) =>
  bytes(
    JSON.stringify(
      request.body.tools.filter((tool) => tool.name.startsWith('mcp__plugin_delegate')),
    ),
  );

/**
 * A rough prompt-cache split of one request: the tokens of the longest prefix (tools, then
 * system, then messages, the order the API caches them in) it shares with an earlier request of
 * the run, read from the cache; the rest is written to it.
 */
function cacheSplit(request, earlier) {
  const key = ({ body }) => JSON.stringify([body.tools, body.system, body.messages]);
  const text = key(request);
  let shared = 0;
  for (const other of earlier.map(key)) {
    let index = 0;
    while (index < other.length && other[index] === text[index]) index += 1;
    shared = Math.max(shared, index);
  }
  return Math.min(tokens(bytes(text.slice(0, shared))), tokens(bytes(request.rawBody)));
}

/** Prices usage with Claude's prices from the offline table (tiers and cache rates included). */
async function anthropicPrices() {
  const { calcPrice } = await import('@pydantic/genai-prices');
  return (usage, model) => {
    const found = calcPrice(usage, model, { providerId: 'anthropic' });
    if (!found) throw new Error(`the price table has no Anthropic price for ${model}`);
    return found;
  };
}

/** USD of a run's supervisor side: input uncached, or split by {@link cacheSplit}. */
function costOf(run, price, cached) {
  const input = run.requests.reduce((sum, request) => {
    const total = tokens(bytes(request.rawBody));
    const read = cached ? cacheSplit(request, run.requests.slice(0, request.index)) : 0;
    const usage = cached
      ? { input_tokens: total, cache_read_tokens: read, cache_write_tokens: total - read }
      : { input_tokens: total };
    return sum + price(usage, request.body.model).total_price;
  }, 0);
  const output = { output_tokens: tokens(run.outputBytes) };
  return input + price(output, run.requests[0].body.model).total_price;
}

async function section(a, b) {
  const price = await anthropicPrices();
  const named = [...new Set([...a.requests, ...b.requests].map(({ body }) => body.model))].map(
    (model) => {
      const id = price({ input_tokens: 1 }, model).model.id;
      return id === model ? model : `${id} (the table's closest to ${model})`;
    },
  );
  const rates = price({ input_tokens: 1 }, a.requests[0].body.model).model_price;
  const rate = (value) => (typeof value === 'number' ? value : `${value.base} (tiered)`);
  const subs = a.requests.filter(isSub);
  const inA = tokens(bodyBytes(a.requests));
  const inB = tokens(bodyBytes(b.requests));
  const n = (count) => count.toLocaleString('en-US');
  const dollars = (value) => `$${value.toFixed(4)}`;
  const kb = (count) => `${(count / 1024).toFixed(1)} KB`;
  const ours = (run) => run.requests.reduce((sum, request) => sum + pluginTools(request), 0);
  const worker = b.worker;
  return {
    title: 'Explore: Claude’s subagent or a worker',
    note:
      `The real Claude Code ${CLAUDE_CLI_VERSION} (\`-p\`, with this plugin) answers one question about a ${a.project.count}-file TypeScript project ` +
      `(${kb(a.project.bytes)}; the answer sits in a file the question does not name) through one Explore \`Agent\` call, offline, twice: ` +
      'A by Claude’s own subagent, whose model (the fake supervisor API) greps, then reads two files; B with Explore mapped to a fake ' +
      'worker that makes the same grep and reads with delegate’s tools and gives the same report. Input figures are the request bodies ' +
      'the supervisor API received (the `x-claude-code-agent-id` header marks the subagent’s own), counted as UTF-8 bytes ÷ 4 since no ' +
      'tokenizer is available offline (JSON syntax included); output is the scripted replies’ bytes ÷ 4; both are estimates. ' +
      `Prices are Claude’s for ${named.join(', ')}, the model Claude Code named, from the offline \`@pydantic/genai-prices\` table ` +
      `($${rate(rates.input_mtok)} in, $${rate(rates.output_mtok)} out per million tokens); the cached line counts the prefix (tools, system, messages) ` +
      `a request shares with an earlier one of its run as cache reads ($${rate(rates.cache_read_mtok)}) and the rest as cache writes ` +
      `($${rate(rates.cache_write_mtok)}). One run each: the counts do not depend on the machine, up to a few bytes of temp paths.`,
    rows: [
      ['requests to the supervisor API, A / B', `${a.requests.length} / ${b.requests.length}`, ''],
      [
        'supervisor input tokens (est.), A / B',
        `${n(inA)} / ${n(inB)} = ${(inB / inA).toFixed(2)}× A's`,
        'lower with B',
      ],
      [
        'of which the subagent’s own conversation (A)',
        `${n(tokens(bodyBytes(subs)))} in ${subs.length} requests (${kb(bodyBytes(subs))})`,
        '',
      ],
      [
        'of which delegate’s MCP tool definitions, A / B',
        `${n(tokens(ours(a)))} / ${n(tokens(ours(b)))} (${kb(pluginTools(a.requests[0]))} in each request)`,
        '',
      ],
      [
        'supervisor output tokens (est.), A / B',
        `${n(tokens(a.outputBytes))} / ${n(tokens(b.outputBytes))}`,
        '',
      ],
      [
        'supervisor cost, no prompt cache, A / B',
        `${dollars(costOf(a, price, false))} / ${dollars(costOf(b, price, false))}`,
        'lower with B',
      ],
      [
        'supervisor cost, prompt cache (rough), A / B',
        `${dollars(costOf(a, price, true))} / ${dollars(costOf(b, price, true))}`,
        'lower with B',
      ],
      [
        'Agent result the main loop read, A / B',
        `${n(bytes(agentResult(a.requests)))} / ${n(bytes(agentResult(b.requests)))} bytes`,
        '',
      ],
      ['files read, A / B', `${a.files} / ${b.files}`, 'the same'],
      [
        'worker side (B), from delegate’s ledger: calls, tokens in / out as the fake reported, cost',
        `${worker.calls}, ${n(worker.input)} / ${n(worker.output)}, ${dollars(worker.cost)} (a local profile; ${kb(worker.bodyBytes)} sent)`,
        '',
      ],
    ],
  };
}

// The project: a small shop in TypeScript. The answer lives in src/billing/settlement.ts, which
// the question does not name; a grep for refund|unpaid finds it among five other files.

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchExplore(join(dirname(fileURLToPath(import.meta.url)), '..'));
  console.log(result.title);
  for (const [figure, value, bar] of result.rows)
    console.log(`  ${figure}: ${value}${bar ? ` (${bar})` : ''}`);
  console.log(`\n${result.note}`);
}
