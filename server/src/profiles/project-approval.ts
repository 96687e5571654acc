/**
 * A project file tunes, never chooses where data goes. A profile only a project's
 * `.claude/delegate.json` defines (a cloned repository's choice, not the user's) is set apart
 * until the user approves its endpoint for that file, once, from a terminal
 * (`delegate approve-project`); the approval is kept in the user's config.json and names the
 * file and the endpoint, so a changed endpoint needs approving again. A profile the user's
 * config (or the environment profile) defines keeps the user's endpoint (project-overrides.ts)
 * and needs no approval.
 */
import { dirname } from 'node:path';
import { UserError } from '../util/user-error.ts';
import { shellQuote } from '../util/shell-quote.ts';
import { describeEndpoint, endpointOf, isEndpointApproved } from '../config/project-approvals.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

/**
 * Moves out of `profiles` every project profile that no user profile of the same name pins and
 * whose endpoint `approvals` (the user config's) does not list for its file; returns them,
 * marked `isUnapproved`, in file order. What stays in `profiles` is all a call can find.
 */
export function setApartUnapproved(
  profiles: Map<string, ResolvedProfile>,
  userNames: ReadonlySet<string>,
  approvals: unknown,
): Map<string, ResolvedProfile> {
  const setApart = new Map<string, ResolvedProfile>();
  for (const [name, profile] of profiles) {
    if (profile.source !== 'project' || userNames.has(name)) continue;
    if (isEndpointApproved(approvals, profile.origin, endpointOf(profile))) continue;
    profiles.delete(name);
    setApart.set(name, { ...profile, isUnapproved: true });
  }
  return setApart;
}

/** The command the user runs to approve the endpoints of the project whose file is `projectFile`. */
export function approveCommand(projectFile: string): string {
  const projectDir = dirname(dirname(projectFile));
  const word = /^[\w@%+=:,./-]+$/.test(projectDir) ? projectDir : shellQuote(projectDir);
  return `delegate approve-project ${word}`;
}

/** The one line a call on a set-apart profile fails with: what, where to, and how to approve. */
export function unapprovedError(profile: ResolvedProfile): UserError {
  const command = approveCommand(profile.origin);
  return new UserError(
    `Profile "${profile.name}" is defined only by the project file ${profile.origin}, which points it at ` +
      `${describeEndpoint(endpointOf(profile))}, an endpoint the user has not approved for that file, so nothing ` +
      `was sent. Only the user may approve it, once: \`${command}\` in a terminal (in Claude Code: ` +
      `\`! ${command}\`). Or use another profile.`,
  );
}

/** `providers`' mark on a set-apart profile. */
export function unapprovedMark(profile: ResolvedProfile): string {
  return `NOT APPROVED: only ${profile.origin} defines it; nothing is sent to it until the user runs \`${approveCommand(profile.origin)}\``;
}
