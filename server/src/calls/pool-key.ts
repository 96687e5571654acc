import { isCliFormat } from '../config/config-rules.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

export const DEFAULT_CLOUD_POOL = 6;
export const DEFAULT_LOCAL_POOL = 2;
/** CLI-engine tasks at once per CLI on this machine. */
export const DEFAULT_CLI_POOL = 2;

/**
 * The pool a profile's calls share: its `poolKey`, else — for a local server, whose GPU is
 * the bottleneck whatever model it runs — the server's host, else the endpoint and model.
 */
export function poolKeyOf(profile: ResolvedProfile): string {
  if (profile.poolKey) return profile.poolKey;
  // A CLI engine's runs share one pool per CLI (the user's plan is the limit), whatever the model.
  if (isCliFormat(profile.format)) return `cli:${profile.format}`;
  const host = new URL(profile.baseUrl).host;
  return profile.local ? `local ${host}` : `${host} ${profile.model}`;
}

export function poolSizeOf(profile: ResolvedProfile): number {
  if (isCliFormat(profile.format)) return profile.pool ?? DEFAULT_CLI_POOL;
  return profile.pool ?? (profile.local ? DEFAULT_LOCAL_POOL : DEFAULT_CLOUD_POOL);
}
