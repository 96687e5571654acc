import type { ResolvedProfile } from '../config/load-config.ts';

export const DEFAULT_CLOUD_POOL = 6;
export const DEFAULT_LOCAL_POOL = 2;

/**
 * The pool a profile's calls share: its `poolKey`, else — for a local server, whose GPU is
 * the bottleneck whatever model it runs — the server's host, else the endpoint and model.
 */
export function poolKeyOf(profile: ResolvedProfile): string {
  if (profile.poolKey) return profile.poolKey;
  const host = new URL(profile.baseUrl).host;
  return profile.local ? `local ${host}` : `${host} ${profile.model}`;
}

export function poolSizeOf(profile: ResolvedProfile): number {
  return profile.pool ?? (profile.local ? DEFAULT_LOCAL_POOL : DEFAULT_CLOUD_POOL);
}
