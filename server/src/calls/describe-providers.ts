import { discoverLocalServer, discoveredProfile } from '../profiles/discover-local.ts';
import { everyProfile, loadConfig, type LoadedConfig } from '../profiles/load-config.ts';
import { credentialsNote } from '../profiles/credentials.ts';
import { describeAuth, endpointFor } from '../profiles/profile-endpoint.ts';
import { defaultProfileName, noWorkerMessage } from '../profiles/resolve-profile.ts';
import { unapprovedMark } from '../profiles/project-approval.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { errorMessage } from '../util/user-error.ts';
import { slotsDir } from '../config/paths.ts';
import { poolKeyOf, poolSizeOf } from './pool-key.ts';
import { projectKey, readOutcomes } from './outcomes.ts';
import { scoreboardBrief } from './scoreboard.ts';
import { poolHolders, type PoolHolder } from './pool.ts';
import { knownSecrets } from '../profiles/known-secrets.ts';
import { localNameProblem } from '../profiles/local-address.ts';
import { createClient } from '../providers/create-client.ts';
import { ProviderError } from '../wire/spec.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import type { RunnerConfig } from '../config/schema.ts';
import {
  checkRunner,
  DEFAULT_RUNNER_TASKS,
  runnerAddress,
  type RunnerFacts,
} from '../runners/check-runner.ts';

const CHECK_TIMEOUT_MS = 5_000;
const MODELS_SHOWN = 8;

/**
 * The text of the `providers` tool: every profile, the default, the runners, and (with `check`)
 * live facts. `runners: false` leaves the runners out (`delegate doctor` checks them apart).
 */
export async function describeProviders(
  context: AppContext,
  check: boolean,
  options: { runners?: boolean } = {},
): Promise<string> {
  const config = loadConfig(context.dataHome, context.projectDir, context.env);
  const runners =
    options.runners === false ? Promise.resolve('') : describeRunners(config, context, check);
  runners.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  const notes = [
    credentialsNote(context.dataHome),
    config.envProfileIgnored,
    ...(config.warnings ?? []),
  ].filter((note): note is string => note !== undefined);
  const noted = (text: string) => (notes.length ? `${notes.join('\n')}\n${text}` : text);
  const discover = context.discover ?? discoverLocalServer;
  if (config.profiles.size === 0 && !config.unapproved) {
    const server = await discover(context.env);
    if (!server) return noted(noWorkerMessage(config.configFile) + (await runners));
    const profile = discoveredProfile(server);
    const lines = await describeProfile(profile, context, check, true);
    const skipped = server.skipped.length
      ? ` Skipped (cannot chat): ${server.skipped.join(', ')}.`
      : '';
    return noted(
      `No profiles configured; using the auto-detected local server:\n${lines}\n` +
        `Served models: ${server.models.slice(0, MODELS_SHOWN).join(', ')}. Chosen: ${server.model}.${skipped} ` +
        `To use another, add a profile with provider_set or in ${config.configFile} (its "model" picks it).` +
        (await runners),
    );
  }
  const defaultName = defaultProfileName(config);
  const blocks = await Promise.all(
    [...config.profiles.values()].map((profile) =>
      describeProfile(profile, context, check, profile.name === defaultName, everyProfile(config)),
    ),
  );
  for (const profile of config.unapproved?.values() ?? []) {
    blocks.push(describeUnapproved(profile, profile.name === defaultName));
  }
  const files = config.files.length ? config.files.join(', ') : 'DELEGATE_* environment variables';
  const why = defaultReason(config, defaultName);
  return noted(
    `Profiles (default: ${defaultName ?? 'none — pass profile or set defaultProfile'}; from ${files}${why}):\n${blocks.join('\n')}` +
      (await runners) +
      scoreboardBrief(readOutcomes(context.dataHome), projectKey(context.projectDir)),
  );
}

/** `\nRunners:` and one line per runner (with `check`, its facts below it); '' with none. */
async function describeRunners(
  config: LoadedConfig,
  context: AppContext,
  check: boolean,
): Promise<string> {
  const runners = [...(config.runners ?? new Map<string, RunnerConfig>())];
  if (runners.length === 0) return '';
  const holders = poolHolders(slotsDir(context.dataHome));
  const lines = await Promise.all(
    runners.map(async ([name, runner]) => {
      const line = `  ${runnerLine(name, runner, holders)}`;
      if (!check) return line;
      const facts = await checkRunner(runnerAddress(name, runner), context);
      return `${line}\n    check: ${describeRunnerFacts(facts)}`;
    }),
  );
  return `\nRunners:\n${lines.join('\n')}`;
}

/** `<name> — user@host:port, workdir …, maxTasks n, tasks running k`. */
function runnerLine(name: string, runner: RunnerConfig, holders: readonly PoolHolder[]): string {
  const where = runnerWhere(runner);
  const running = holders.filter((holder) => holder.poolKey === `runner:${name}`).length;
  const maxTasks = runner.maxTasks ? `${runner.maxTasks}` : `${DEFAULT_RUNNER_TASKS} (default)`;
  return `${name} — ${where}, workdir ${runner.workdir}, maxTasks ${maxTasks}, tasks running ${running}`;
}

/** `user@host:port`, each part only when the config has it. */
export function runnerWhere(runner: RunnerConfig): string {
  return `${runner.user ? `${runner.user}@` : ''}${runner.host}${runner.port ? `:${runner.port}` : ''}`;
}

/** `ok — git version …, shell bash, sandbox: bubblewrap ok`, or `FAILED — <problem>`. */
function describeRunnerFacts(facts: RunnerFacts): string {
  return facts.problem ? `FAILED — ${facts.problem}` : `ok — ${runnerFactsText(facts)}`;
}

/** What a runner that can take tasks offers: `git version …, shell bash, sandbox: bubblewrap ok`. */
export function runnerFactsText(facts: RunnerFacts): string {
  return `${facts.git ?? 'git'}, shell ${facts.shell ?? 'sh'}, sandbox: bubblewrap ${facts.bwrap ?? 'missing'}`;
}

function defaultReason(config: LoadedConfig, defaultName: string | undefined): string {
  if (defaultName === undefined) return '';
  if (config.defaultFrom) return `; defaultProfile set in ${config.defaultFrom}`;
  if (config.profiles.get(defaultName)?.source === 'env') return '; the environment profile';
  return '; the only profile';
}

/** Where a profile's settings came from; its key's source is in `describeAuth`. */
function settingsOrigin(profile: ResolvedProfile): string {
  const replaces = profile.replaces ? ` (replaces the one in ${profile.replaces})` : '';
  switch (profile.source) {
    case 'config':
      return `from user config ${profile.origin}`;
    case 'project':
      return `from project config ${profile.origin}${replaces}`;
    case 'env':
      return `from ${profile.origin}`;
    default:
      return 'auto-detected';
  }
}

/** A profile awaiting approval: what it is and where it points, never checked (no request). */
function describeUnapproved(profile: ResolvedProfile, isDefault: boolean): string {
  const facts = [
    profile.format,
    `model ${profile.model}`,
    profile.baseUrl,
    unapprovedMark(profile),
  ];
  const lines = [
    `- ${profile.name}${isDefault ? ' (default)' : ''}: ${facts.filter(Boolean).join(' · ')}`,
  ];
  if (profile.use) lines.push(`  use: ${profile.use}`);
  return lines.join('\n');
}

async function describeProfile(
  profile: ResolvedProfile,
  context: AppContext,
  check: boolean,
  isDefault: boolean,
  profiles: Iterable<ResolvedProfile> = [],
): Promise<string> {
  const holders = poolHolders(slotsDir(context.dataHome));
  const facts = [
    profile.format,
    `model ${profile.model}`,
    profile.baseUrl,
    await localOrRemote(profile, context),
    describeAuth(profile, context.env),
    settingsOrigin(profile),
  ];
  const lines = [`- ${profile.name}${isDefault ? ' (default)' : ''}: ${facts.join(' · ')}`];
  if (profile.use) lines.push(`  use: ${profile.use}`);
  // Names only: a header value may be a gateway credential.
  if (profile.headers) lines.push(`  headers: ${Object.keys(profile.headers).join(', ')}`);
  lines.push(`  pool: ${describePool(profile, holders)}`);
  if (profile.failover?.length) lines.push(`  failover: ${profile.failover.join(' → ')}`);
  if (check) lines.push(`  check: ${await checkProfile(profile, context, profiles)}`);
  return lines.join('\n');
}

/** `local` only where the address is: a name is resolved (see config/local-address.ts). */
async function localOrRemote(profile: ResolvedProfile, context: AppContext): Promise<string> {
  if (!profile.local) return 'remote';
  const problem = await localNameProblem(profile.baseUrl, context.env);
  return problem ? `local REFUSED (${problem}): remove "local": true or fix baseUrl` : 'local';
}

async function checkProfile(
  profile: ResolvedProfile,
  context: AppContext,
  profiles: Iterable<ResolvedProfile>,
): Promise<string> {
  const started = Date.now();
  try {
    const client = createClient(profile.format, endpointFor(profile, context.env), () =>
      knownSecrets(context.dataHome, [...profiles, profile], context.env),
    );
    const models = (await client.listModels?.({ totalTimeoutMs: CHECK_TIMEOUT_MS })) ?? [];
    const served = models.includes(profile.model)
      ? `serves ${profile.model}`
      : `does NOT list ${profile.model}`;
    const shown = models.slice(0, MODELS_SHOWN).join(', ');
    const more = models.length > MODELS_SHOWN ? ` (+${models.length - MODELS_SHOWN} more)` : '';
    return `reachable in ${Date.now() - started} ms; ${served}; models: ${shown || 'none listed'}${more}`;
  } catch (error) {
    if (
      error instanceof ProviderError &&
      error.kind === 'http' &&
      (error.status === 404 || error.status === 405)
    ) {
      return `reachable in ${Date.now() - started} ms, but it lists no models (HTTP ${error.status})`;
    }
    return `FAILED: ${errorMessage(error)}`;
  }
}

function describePool(profile: ResolvedProfile, holders: readonly PoolHolder[]): string {
  const key = poolKeyOf(profile);
  const busy = holders.filter((holder) => holder.poolKey === key);
  const who = busy.map(
    (holder) =>
      `pid ${holder.pid}${holder.label ? ` (${holder.label})` : ''} since ${holder.since}`,
  );
  return `"${key}" ${busy.length}/${poolSizeOf(profile)} busy${who.length ? `: ${who.join(', ')}` : ''}`;
}
