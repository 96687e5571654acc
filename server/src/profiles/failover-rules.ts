import { UserError } from '../util/user-error.ts';
import { isCliFormat } from '../config/config-rules.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

/**
 * A local profile never fails over (its data must stay on this machine) and is never the
 * failover target of a non-local one (the chain would pull a cloud call onto it); chains only
 * name existing profiles.
 */
export function checkFailoverChains(profiles: ReadonlyMap<string, ResolvedProfile>): void {
  for (const profile of profiles.values()) {
    const chain = profile.failover ?? [];
    const where = `Invalid config in ${profile.origin}: profiles.${profile.name}.failover`;
    if (chain.length > 0 && isCliFormat(profile.format)) {
      throw new UserError(
        `${where}: a CLI profile (${profile.format}) never fails over (its quota is your plan). Remove the failover list.`,
      );
    }
    if (chain.length > 0 && profile.local) {
      throw new UserError(
        `${where}: a local profile never fails over (its data stays on this machine). Remove the failover list.`,
      );
    }
    for (const target of chain) {
      const next = profiles.get(target);
      if (!next || target === profile.name) {
        throw new UserError(
          `${where}: "${target}" is not another profile (profiles: ${[...profiles.keys()].join(', ') || 'none'}).`,
        );
      }
      if (isCliFormat(next.format)) {
        throw new UserError(
          `${where}: "${target}" is a CLI profile, which is never a failover target.`,
        );
      }
      if (next.local) {
        throw new UserError(
          `${where}: "${target}" is local; a cloud profile never fails over to a local one. Remove it from the list.`,
        );
      }
    }
  }
}
