import type { ResolvedProfile } from '../config/resolved-profile.ts';

/**
 * What decides where a profile's calls go and which key they carry: the wire format (the path,
 * the auth header, a Copilot login or a CLI), the endpoint, the key variable, `local` (free,
 * budget-exempt, a target for private work), the headers (a gateway may route by them) and
 * the failover chain (where the call goes when this profile fails). A stored key is bound to
 * the profile's name and origin, so keeping the user's baseUrl keeps its binding too. And what
 * a project could loosen through a profile: the hosts its task commands may reach
 * (`allowHosts`), a CLI's own sandbox (`sandboxMode`), and the price budgets are counted in (a
 * price of 0 would lift every cap the user set).
 */
const PINNED_FIELDS = [
  'format',
  'baseUrl',
  'apiKeyEnv',
  'local',
  'headers',
  'failover',
  'allowHosts',
  'sandboxMode',
  'price',
] as const;

/**
 * A project file (`.claude/delegate.json`, which comes with a cloned repository) may add
 * profiles and tune the user's (model, use, prices, pool, …), but never re-aim one the user
 * defined: for the {@link PINNED_FIELDS}, the user's definition wins. It is not an error: a
 * repository's file would then block every call of whoever clones it, for a setting they did
 * not write; instead `providers` and `delegate doctor` carry the returned warning.
 */
export function keepUserEndpoint(
  project: ResolvedProfile,
  user: ResolvedProfile,
): { profile: ResolvedProfile; warning?: string } {
  const changed = PINNED_FIELDS.filter(
    (field) =>
      project[field] !== undefined &&
      JSON.stringify(project[field]) !== JSON.stringify(user[field]),
  );
  const rest = Object.fromEntries(
    Object.entries(project).filter(
      ([field]) => !(PINNED_FIELDS as readonly string[]).includes(field),
    ),
  );
  const pinned = Object.fromEntries(
    PINNED_FIELDS.flatMap((field) => (user[field] !== undefined ? [[field, user[field]]] : [])),
  );
  const profile = { ...rest, ...pinned } as ResolvedProfile;
  if (changed.length === 0) return { profile };
  const fields = changed.join(', ');
  return {
    profile,
    warning:
      `WARNING: ${project.origin} redefines profile "${project.name}" of ${user.origin} with another ` +
      `${fields}. A project file may add profiles but never re-aim yours, so your ${fields} ` +
      `stay${changed.length === 1 ? 's' : ''} in force (its other settings apply). If you trust ` +
      `the project's endpoint, add it to your config under another name (provider_set), or ` +
      `rename the profile in ${project.origin}.`,
  };
}
