import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { Environment } from '../config/paths.ts';
import { UserError } from '../util/user-error.ts';

/**
 * Endpoint safety: a worker endpoint is a model server, never a cloud metadata service or a
 * link-local address. A prompt-injected supervisor could otherwise point a profile at
 * 169.254.169.254 and read the machine's cloud credentials through the worker's answers.
 * Loopback and private ranges stay allowed: local models live there.
 */

/** Names that reach metadata services whatever DNS says. Compared lowercase, without a trailing dot. */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
]);

/** Metadata services outside 169.254.0.0/16 (which is refused as a whole). */
const METADATA_V4: Record<string, string> = {
  '100.100.100.200': 'the Alibaba Cloud metadata address',
  '192.0.0.192': 'the Oracle Cloud metadata address',
};

/** A connection delegate refuses to make; never retried, never failed over. */
export class RefusedEndpointError extends UserError {
  readonly code = 'EDELEGATE_REFUSED_ENDPOINT';
}

/** Why an IP address is refused, or undefined when it may be called. */
export function refusedAddressReason(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const version = isIP(bare);
  if (version === 4) return refusedV4(bare.split('.').map(Number));
  if (version === 6) return refusedV6(expandV6(bare));
  return undefined;
}

function refusedV4(octets: number[]): string | undefined {
  const text = octets.join('.');
  if (text === '169.254.169.254') return 'the cloud metadata address (AWS, GCP, Azure, …)';
  if (octets[0] === 169 && octets[1] === 254) return 'a link-local address (169.254.0.0/16)';
  return METADATA_V4[text];
}

function refusedV6(groups: number[]): string | undefined {
  if (groups.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) {
    return 'the AWS metadata address (fd00:ec2::254)';
  }
  if (((groups[0] ?? 0) & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)';
  const embedded = embeddedV4(groups);
  return embedded ? refusedV4(embedded) : undefined;
}

/**
 * Whether an IP address stays on this machine or the private network: loopback, RFC 1918,
 * the shared address space 100.64/10 (where Tailscale and other overlay networks number a
 * user's own machines, such as a GPU box serving a model), IPv6 unique-local (fc00::/7), the
 * unspecified address (which connects to this machine), and IPv4 carried in IPv6. Not
 * link-local (refused as a whole).
 */
export function isLocalAddress(address: string): boolean {
  // A cloud metadata address (Alibaba's sits in 100.64/10) is never a model server of yours.
  if (refusedAddressReason(address) !== undefined) return false;
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const version = isIP(bare);
  if (version === 4) return isLocalV4(bare.split('.').map(Number));
  if (version !== 6) return false;
  const groups = expandV6(bare);
  if (groups.every((group, index) => group === (index === 7 ? 1 : 0))) return true;
  if (groups.every((group) => group === 0)) return true;
  if (((groups[0] ?? 0) & 0xfe00) === 0xfc00) return true;
  const embedded = embeddedV4(groups);
  return embedded ? isLocalV4(embedded) : false;
}

function isLocalV4([a = -1, b = -1, c = -1, d = -1]: number[]): boolean {
  return (
    a === 127 ||
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 0 && b === 0 && c === 0 && d === 0)
  );
}

/** The IPv4 address an IPv6 one carries: mapped, compatible, SIIT, NAT64 (64:ff9b::/96) or 6to4. */
function embeddedV4(groups: number[]): number[] | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const fromPair = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255];
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (zeroPrefix && g4 === 0 && (g5 === 0xffff || g5 === 0) && (g6 !== 0 || g7 > 1)) {
    return fromPair(g6, g7);
  }
  if (zeroPrefix && g4 === 0xffff && g5 === 0) return fromPair(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return fromPair(g6, g7);
  }
  if (g0 === 0x2002) return fromPair(g1, g2);
  return undefined;
}

/** Eight 16-bit groups of a valid IPv6 address (with `::` and a dotted IPv4 tail resolved). */
function expandV6(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const first = parse(head);
  const last = tail === undefined ? [] : parse(tail);
  const zeros = new Array<number>(Math.max(0, 8 - first.length - last.length)).fill(0);
  return [...first, ...zeros, ...last];
}

/**
 * Refuses a URL before any connection: a scheme other than http(s), a metadata host name, or
 * a literal address that is refused. The WHATWG parser has already turned numeric forms
 * (2852039166, 0xA9FEA9FE, 0251.0376.0251.0376) into dotted IPv4 and compressed IPv6.
 */
export function checkEndpointUrl(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RefusedEndpointError(
      `Refused ${url.href}: only http and https endpoints are called.`,
    );
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (METADATA_NAMES.has(host)) throw refusal(url.host, `${host} is a cloud metadata service`);
  const reason = refusedAddressReason(host);
  if (reason) throw refusal(url.host, `${host} is ${reason}`);
}

function refusal(target: string, why: string): RefusedEndpointError {
  return new RefusedEndpointError(
    `Refused to connect to ${target}: ${why}. Worker endpoints may be loopback, private or public ` +
      'addresses, never link-local or cloud-metadata ones; set the profile’s baseUrl to the model server.',
  );
}

export type HostOverrides = ReadonlyMap<string, readonly string[]>;

/**
 * `DELEGATE_HOSTS_FOR_TEST="name=ip,name=ip2"`: resolve these names to these addresses instead
 * of asking DNS, so tests can make a name resolve to a metadata address without a network or
 * /etc/hosts. The addresses are checked like any DNS answer; this cannot bypass the check.
 */
export function hostOverridesFrom(env: Environment): HostOverrides {
  const overrides = new Map<string, string[]>();
  for (const pair of (env.DELEGATE_HOSTS_FOR_TEST ?? '').split(',')) {
    const [name, address] = pair.split('=').map((part) => part.trim().toLowerCase());
    if (!name || !address || !isIP(address)) continue;
    overrides.set(name, [...(overrides.get(name) ?? []), address]);
  }
  return overrides;
}

interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address of `hostname`; refused when any of them is (a name must not mix in a bad one). */
export async function resolveChecked(
  hostname: string,
  overrides: HostOverrides,
): Promise<ResolvedAddress[]> {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (METADATA_NAMES.has(name)) throw refusal(hostname, `${name} is a cloud metadata service`);
  const listed = overrides.get(name);
  const addresses = listed
    ? listed.map((address) => ({ address, family: isIP(address) }))
    : await dnsLookup(name, { all: true, verbatim: true });
  for (const { address } of addresses) {
    const reason = refusedAddressReason(address);
    if (reason) throw refusal(hostname, `${hostname} resolves to ${address}, ${reason}`);
  }
  return addresses;
}

/**
 * A `lookup` for `http.request`: the socket connects to an address this very lookup checked,
 * so a name that resolves differently later (DNS rebinding) cannot slip past the check.
 */
export function checkedLookup(overrides: HostOverrides): LookupFunction {
  return (hostname, options, callback) => {
    resolveChecked(hostname, overrides).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = addresses.filter((entry) => !wanted || entry.family === wanted);
        const first = usable[0];
        if (options.all) return callback(null, usable);
        if (!first) {
          return callback(
            Object.assign(new Error(`${hostname} has no IPv${wanted} address`), {
              code: 'ENOTFOUND',
            }),
            '',
            0,
          );
        }
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
