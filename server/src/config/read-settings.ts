import { parseJson } from '../util/read-json.ts';
import { readSmallRegularFileSync } from '../util/regular-file.ts';
import { configPath, projectConfigPath, type Environment } from './paths.ts';
import { endpointOf, isEndpointApproved, PROJECT_APPROVALS } from './project-approvals.ts';
import { COPILOT_API_URL } from './copilot-endpoints.ts';

/**
 * A lenient, dependency-free read of the config files for the hooks, which must start in a
 * few milliseconds (no zod). Fields of the wrong type are ignored here; the MCP server
 * validates the same files strictly and reports errors by file and field.
 */
export interface RawConfig {
  file: string;
  /** `config`: the user's config.json; `project`: the project's `.claude/delegate.json`. */
  source: 'config' | 'project';
  json: Record<string, unknown>;
}

/**
 * A config file is small; a project's `.claude/delegate.json` comes with the repository, so a
 * FIFO or a link to `/dev/zero` there must neither block nor flood a hook.
 */
const MAX_CONFIG_BYTES = 1024 * 1024;

export function readRawConfigs(dataHome: string, projectDir: string): RawConfig[] {
  const configs: RawConfig[] = [];
  const files = [
    [configPath(dataHome), 'config'],
    [projectConfigPath(projectDir), 'project'],
  ] as const;
  for (const [file, source] of files) {
    try {
      const text = readSmallRegularFileSync(file, file, MAX_CONFIG_BYTES).toString('utf8');
      const json: unknown = parseJson(text);
      if (json && typeof json === 'object' && !Array.isArray(json)) {
        configs.push({ file, source, json: json as Record<string, unknown> });
      }
    } catch {
      // Missing or broken: the server reports broken files; hooks carry on with defaults.
    }
  }
  return configs;
}

export const LARGE_READ_MODES = ['deny', 'ask', 'off'] as const;
export type LargeReadMode = (typeof LARGE_READ_MODES)[number];

/** The tools whose outputs the guard measures, and `mcp` for every other server's tools. */
export const GUARDED_OUTPUTS = ['Bash', 'Read', 'Grep', 'Glob', 'WebFetch', 'mcp'] as const;

export interface LargeReadSettings {
  /** What the predictive layer does with a call it can prove is big; `off` also stops the measured layer. */
  mode: LargeReadMode;
  thresholdBytes: number;
  /** Per-tool thresholds (`mcp` for other servers' tools); 0 means never digest that tool. */
  toolThresholdBytes: Readonly<Record<string, number>>;
  /** The measured layer: big real outputs become digests. */
  shouldDigest: boolean;
  /** Bash commands (prefixes, whole words) whose full output the user always wants. */
  allowCommands: readonly string[];
}

export const DEFAULT_LARGE_READ_KB = 16;
/** The threshold of one tool's output: its own if set, else the general one. */
export function thresholdFor(settings: LargeReadSettings, kind: string): number {
  return settings.toolThresholdBytes[kind] ?? settings.thresholdBytes;
}

const kilobytes = (raw: unknown, isZeroAllowed = false): number | undefined => {
  const kb = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  return typeof kb === 'number' && Number.isFinite(kb) && (kb > 0 || (isZeroAllowed && kb === 0))
    ? kb
    : undefined;
};

/** Guard settings: defaults, then config.json, then the project file, then the environment. */
export function largeReadSettings(
  configs: readonly RawConfig[],
  env: Environment,
): LargeReadSettings {
  let mode: LargeReadMode = 'deny';
  let thresholdKb = DEFAULT_LARGE_READ_KB;
  let shouldDigest = true;
  const toolKb: Record<string, number> = {};
  const allowCommands: string[] = [];
  const apply = (rawMode: unknown, rawKb: unknown) => {
    if (LARGE_READ_MODES.includes(rawMode as LargeReadMode)) mode = rawMode as LargeReadMode;
    thresholdKb = kilobytes(rawKb) ?? thresholdKb;
  };
  for (const { json } of configs) {
    const section = json.largeRead as Record<string, unknown> | undefined;
    if (!section || typeof section !== 'object') continue;
    apply(section.mode, section.thresholdKb);
    if (typeof section.digest === 'boolean') shouldDigest = section.digest;
    const perTool = section.toolThresholdKb;
    if (perTool && typeof perTool === 'object') {
      for (const kind of GUARDED_OUTPUTS) {
        const kb = kilobytes((perTool as Record<string, unknown>)[kind], true);
        if (kb !== undefined) toolKb[kind] = kb;
      }
    }
    if (Array.isArray(section.allowCommands)) {
      allowCommands.push(
        ...section.allowCommands
          .filter((entry): entry is string => typeof entry === 'string' && entry.trim() !== '')
          .map((entry) => entry.trim()),
      );
    }
  }
  apply(env.DELEGATE_LARGE_READ?.trim(), env.DELEGATE_LARGE_READ_KB);
  const toolThresholdBytes = Object.fromEntries(
    Object.entries(toolKb).map(([kind, kb]) => [kind, Math.round(kb * 1024)]),
  );
  return {
    mode,
    thresholdBytes: Math.round(thresholdKb * 1024),
    toolThresholdBytes,
    shouldDigest: shouldDigest && (mode as LargeReadMode) !== 'off',
    allowCommands,
  };
}

export interface BriefProfile {
  name: string;
  use?: string;
  apiKeyEnv?: string;
  local?: boolean;
}

/**
 * Profile names and the little the briefing needs of them, project winning per name except for
 * the key variable and `local` of a profile the user defined (see config/project-overrides.ts).
 * A profile only the project defines is left out until the user approved its endpoint (see
 * profiles/project-approval.ts): no call may use it.
 */
export function briefProfiles(configs: readonly RawConfig[]): BriefProfile[] {
  const profiles = new Map<string, BriefProfile>();
  const approvals = configs.find(({ source }) => source === 'config')?.json[PROJECT_APPROVALS];
  for (const { file, source, json } of configs) {
    const section = json.profiles;
    if (!section || typeof section !== 'object') continue;
    for (const [name, value] of Object.entries(section as Record<string, unknown>)) {
      if (!value || typeof value !== 'object') continue;
      const profile = value as Record<string, unknown>;
      const user = source === 'project' ? profiles.get(name) : undefined;
      if (source === 'project' && !user && !isApprovedRaw(approvals, file, profile)) continue;
      const apiKeyEnv = user ? user.apiKeyEnv : profile.apiKeyEnv;
      const local = user ? user.local : profile.local;
      profiles.set(name, {
        name,
        ...(typeof profile.use === 'string' ? { use: profile.use } : {}),
        ...(typeof apiKeyEnv === 'string' ? { apiKeyEnv } : {}),
        ...(local === true ? { local: true } : {}),
      });
    }
  }
  return [...profiles.values()];
}

function isApprovedRaw(
  approvals: unknown,
  file: string,
  profile: Record<string, unknown>,
): boolean {
  const { format, baseUrl } = profile;
  if (typeof format !== 'string') return false;
  // As the schema fills it in: a copilot profile without baseUrl calls the Copilot API.
  const url =
    typeof baseUrl === 'string' && baseUrl ? baseUrl : format === 'copilot' ? COPILOT_API_URL : '';
  const endpoint = endpointOf({ format, baseUrl: url });
  return isEndpointApproved(approvals, file, endpoint);
}
