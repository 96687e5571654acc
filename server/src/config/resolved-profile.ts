import type { Profile } from './schema.ts';

export type ProfileSource = 'config' | 'project' | 'env' | 'discovered';

export interface ResolvedProfile extends Profile {
  name: string;
  source: ProfileSource;
  /** The file or variables the profile came from, for `providers` and error messages. */
  origin: string;
  /** The data home whose credentials.json may hold a key for this profile. */
  dataHome?: string;
  /**
   * A project file's profile naming a key variable that the user's own config (or
   * DELEGATE_API_KEY_ENV) never sends to this origin: the key is not sent (see `keyFor`).
   */
  isKeyEnvUntrusted?: boolean;
  /**
   * Only a project file defines this profile, and the user has not approved its endpoint for
   * that file: no call goes to it (see profiles/project-approval.ts).
   */
  isUnapproved?: boolean;
  /** The user config file whose profile of the same name this project profile replaces. */
  replaces?: string;
  /** Set on a profile found by discovery: what a task keeps to call the same server and model. */
  discovered?: DiscoveredSnapshot;
}

/**
 * What a task keeps of a discovered profile (no key: it is local), so its detached worker
 * calls the very server and model the server process picked instead of probing again.
 */
export interface DiscoveredSnapshot {
  server: string;
  format: 'openai';
  baseUrl: string;
  model: string;
  local: true;
}
