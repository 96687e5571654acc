import { realpathSync } from 'node:fs';

/**
 * Where a profile sends what it is given: its wire format (or CLI engine) and its base URL
 * ('' for a CLI's own endpoint). The model, price and other tuning are not part of it.
 */
export interface ProfileEndpoint {
  format: string;
  baseUrl: string;
}

/**
 * The field of the user's config.json that records, per project file (by its real path), the
 * endpoints the user approved for the profiles only that file defines. Only the user's config
 * may hold it: a project file's own is ignored.
 */
export const PROJECT_APPROVALS = 'projectApprovals';

/** The endpoint of a profile, with its URL in one spelling (host case, trailing slashes). */
export function endpointOf(profile: { format: string; baseUrl?: string }): ProfileEndpoint {
  return { format: profile.format, baseUrl: normalUrl(profile.baseUrl ?? '') };
}

function normalUrl(baseUrl: string): string {
  if (!URL.canParse(baseUrl)) return baseUrl.replace(/\/+$/, '');
  return new URL(baseUrl).href.replace(/\/+$/, '');
}

/**
 * The name a project file's approvals are kept under: its real path, so a project reached
 * through a link, or by a task's worker from the resolved path, finds the same record.
 */
export function approvalKey(projectFile: string): string {
  try {
    return realpathSync(projectFile);
  } catch {
    return projectFile;
  }
}

/**
 * Whether `approvals` (the user config's {@link PROJECT_APPROVALS}, read strictly or leniently)
 * lists this endpoint for this project file.
 */
export function isEndpointApproved(
  approvals: unknown,
  projectFile: string,
  endpoint: ProfileEndpoint,
): boolean {
  if (!approvals || typeof approvals !== 'object') return false;
  const key = approvalKey(projectFile);
  const listed = Object.hasOwn(approvals, key)
    ? (approvals as Record<string, unknown>)[key]
    : undefined;
  if (!Array.isArray(listed)) return false;
  return listed.some((entry: unknown) => {
    if (!entry || typeof entry !== 'object') return false;
    const { format, baseUrl } = entry as Record<string, unknown>;
    return (
      format === endpoint.format &&
      typeof baseUrl === 'string' &&
      normalUrl(baseUrl) === endpoint.baseUrl
    );
  });
}

/** `openai at https://…/v1`, or `codex-cli with the CLI's own endpoint`. */
export function describeEndpoint(endpoint: ProfileEndpoint): string {
  return endpoint.baseUrl
    ? `${endpoint.format} at ${endpoint.baseUrl}`
    : `${endpoint.format} with the CLI's own endpoint`;
}
