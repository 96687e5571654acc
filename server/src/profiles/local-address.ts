import { isIP } from 'node:net';
import { hostOverridesFrom, isLocalAddress, resolveChecked } from '../wire/endpoint-safety.ts';
import { UserError } from '../util/user-error.ts';
import type { Environment } from '../config/paths.ts';

/**
 * `local: true` makes a profile free, exempt from budgets, a privacy-safe target for the skills
 * and never a failover source, so it must name a server on this machine or the private network:
 * a loopback or private-range address, or a name that resolves only to such addresses
 * (`localhost`, `*.local` by mDNS, a LAN name). Literal addresses are checked when the config is
 * read; names, which need DNS, before every call and by `providers`.
 */

/** The host of a baseUrl, lowercase, without brackets or a trailing dot. */
function hostOf(baseUrl: string): string {
  return new URL(baseUrl).hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** What a baseUrl's text alone says: its host, and the problem of a literal address. */
interface LiteralCheck {
  host: string;
  isLiteral: boolean;
  problem?: string;
}

/**
 * Every call of a local profile checks its baseUrl, and the answer for a literal address depends
 * on the text alone: it is kept per baseUrl (a process sees a handful). Names are resolved anew.
 */
const literalChecks = new Map<string, LiteralCheck>();
const MAX_KEPT_CHECKS = 64;

function checkLiteral(baseUrl: string): LiteralCheck {
  let check = literalChecks.get(baseUrl);
  if (check) return check;
  const host = hostOf(baseUrl);
  const isLiteral = isIP(host) !== 0;
  check = {
    host,
    isLiteral,
    ...(isLiteral && !isLocalAddress(host)
      ? { problem: `${host} is not a loopback or private-range address` }
      : {}),
  };
  if (literalChecks.size >= MAX_KEPT_CHECKS) literalChecks.clear();
  literalChecks.set(baseUrl, check);
  return check;
}

/** Why `local: true` cannot stand, when that is clear without DNS (a literal address, no URL). */
export function localFlagProblem(baseUrl: string): string | undefined {
  if (!baseUrl) return 'the profile has no baseUrl, so it uses its CLI’s own (cloud) endpoint';
  return checkLiteral(baseUrl).problem;
}

/** Why `local: true` cannot stand for a name, after resolving it; undefined when it can. */
export async function localNameProblem(
  baseUrl: string,
  env: Environment,
): Promise<string | undefined> {
  if (!baseUrl) return localFlagProblem(baseUrl);
  const { host, isLiteral, problem } = checkLiteral(baseUrl);
  if (isLiteral) return problem;
  let addresses: string[];
  try {
    addresses = (await resolveChecked(host, hostOverridesFrom(env))).map((entry) => entry.address);
  } catch (error) {
    return `${host} could not be resolved to check that it is local (${(error as Error).message})`;
  }
  const remote = addresses.filter((address) => !isLocalAddress(address));
  return remote.length
    ? `${host} resolves to ${remote.join(', ')}, not a loopback or private-range address`
    : undefined;
}

/** The readable refusal of a profile whose `local: true` does not hold. */
export function localFlagError(
  profile: { name: string; origin: string },
  problem: string,
): UserError {
  return new UserError(
    `Invalid config in ${profile.origin}: profiles.${profile.name}.local is true, but ${problem}. ` +
      '"local": true is for servers on this machine or your private network (loopback, 10/8, ' +
      '172.16/12, 192.168/16, 100.64/10, fc00::/7, localhost, *.local); it makes calls free and lets private ' +
      'work go there. Remove "local": true (the profile then counts as remote), or point baseUrl ' +
      'at the local server.',
  );
}
