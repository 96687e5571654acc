import { readFileSync } from 'node:fs';
import { parseJson } from '../util/read-json.ts';
import { configPath, projectConfigPath, type Environment } from './paths.ts';

/**
 * A lenient, dependency-free read of the config files for the hooks, which must start in a
 * few milliseconds (no zod). Fields of the wrong type are ignored here; the MCP server
 * validates the same files strictly and reports errors by file and field.
 */
export interface RawConfig {
  file: string;
  json: Record<string, unknown>;
}

export function readRawConfigs(dataHome: string, projectDir: string): RawConfig[] {
  const configs: RawConfig[] = [];
  for (const file of [configPath(dataHome), projectConfigPath(projectDir)]) {
    try {
      const json: unknown = parseJson(readFileSync(file, 'utf8'));
      if (json && typeof json === 'object' && !Array.isArray(json)) {
        configs.push({ file, json: json as Record<string, unknown> });
      }
    } catch {
      // Missing or broken: the server reports broken files; hooks carry on with defaults.
    }
  }
  return configs;
}

export const LARGE_READ_MODES = ['deny', 'ask', 'off'] as const;
export type LargeReadMode = (typeof LARGE_READ_MODES)[number];

export interface LargeReadSettings {
  mode: LargeReadMode;
  thresholdBytes: number;
}

export const DEFAULT_LARGE_READ_KB = 50;

/** Guard settings: defaults, then config.json, then the project file, then the environment. */
export function largeReadSettings(
  configs: readonly RawConfig[],
  env: Environment,
): LargeReadSettings {
  let mode: LargeReadMode = 'deny';
  let thresholdKb = DEFAULT_LARGE_READ_KB;
  const apply = (rawMode: unknown, rawKb: unknown) => {
    if (LARGE_READ_MODES.includes(rawMode as LargeReadMode)) mode = rawMode as LargeReadMode;
    const kb = typeof rawKb === 'string' && rawKb.trim() !== '' ? Number(rawKb) : rawKb;
    if (typeof kb === 'number' && Number.isFinite(kb) && kb > 0) thresholdKb = kb;
  };
  for (const { json } of configs) {
    const section = json.largeRead as { mode?: unknown; thresholdKb?: unknown } | undefined;
    if (section && typeof section === 'object') apply(section.mode, section.thresholdKb);
  }
  apply(env.DELEGATE_LARGE_READ?.trim(), env.DELEGATE_LARGE_READ_KB);
  return { mode, thresholdBytes: Math.round(thresholdKb * 1024) };
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
 */
export function briefProfiles(configs: readonly RawConfig[]): BriefProfile[] {
  const profiles = new Map<string, BriefProfile>();
  for (const [index, { json }] of configs.entries()) {
    const section = json.profiles;
    if (!section || typeof section !== 'object') continue;
    for (const [name, value] of Object.entries(section as Record<string, unknown>)) {
      if (!value || typeof value !== 'object') continue;
      const profile = value as Record<string, unknown>;
      const user = index > 0 ? profiles.get(name) : undefined;
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
