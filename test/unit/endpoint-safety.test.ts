import { describe, expect, it } from 'vitest';
import {
  RefusedEndpointError,
  checkEndpointUrl,
  hostOverridesFrom,
  refusedAddressReason,
  resolveChecked,
} from '../../server/src/wire/endpoint-safety.ts';

/** Every spelling of a refused address: literal, numeric encodings, IPv6 forms that carry IPv4. */
const REFUSED_URLS: Array<[string, RegExp]> = [
  ['http://169.254.169.254/latest/meta-data', /cloud metadata/],
  ['http://2852039166/v1', /169\.254\.169\.254 is the cloud metadata/],
  ['http://0xA9FEA9FE/v1', /169\.254\.169\.254/],
  ['http://0xa9.0xfe.0xa9.0xfe/v1', /169\.254\.169\.254/],
  ['http://0251.0376.0251.0376/v1', /169\.254\.169\.254/],
  ['http://169.254.43518/v1', /169\.254\.169\.254/],
  ['http://[::ffff:169.254.169.254]/v1', /cloud metadata/],
  ['http://[::ffff:a9fe:a9fe]/v1', /cloud metadata/],
  ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/v1', /cloud metadata/],
  ['http://[64:ff9b::a9fe:a9fe]/v1', /cloud metadata/],
  ['http://[2002:a9fe:a9fe::1]/v1', /cloud metadata/],
  ['http://[fd00:ec2::254]/v1', /AWS metadata/],
  ['http://[fe80::1]:8080/v1', /link-local address \(fe80::\/10\)/],
  ['http://[febf::1]/v1', /link-local/],
  ['http://169.254.1.1:11434/v1', /link-local address \(169\.254/],
  ['http://100.100.100.200/v1', /Alibaba/],
  ['http://192.0.0.192/v1', /Oracle/],
  ['http://metadata.google.internal/computeMetadata/v1', /metadata service/],
  ['http://METADATA.GOOGLE.INTERNAL./v1', /metadata service/],
  ['http://metadata.goog/v1', /metadata service/],
  ['file:///etc/passwd', /only http and https/],
];

const ALLOWED_URLS = [
  'http://127.0.0.1:11434/v1',
  'http://localhost:1234/v1',
  'http://[::1]:8080/v1',
  'http://[::ffff:127.0.0.1]:8000/v1',
  'http://10.0.0.5:4000',
  'http://192.168.1.20:11434/v1',
  'http://172.16.0.3/v1',
  'http://100.64.0.1/v1',
  'http://[fd12:3456::1]/v1',
  'http://[fec0::1]/v1',
  'https://api.deepseek.com/v1',
  'http://169.255.0.1/v1',
];

describe('endpoint safety: URLs', () => {
  for (const [url, reason] of REFUSED_URLS) {
    it(`refuses ${url}`, () => {
      expect(() => checkEndpointUrl(new URL(url))).toThrow(RefusedEndpointError);
      expect(() => checkEndpointUrl(new URL(url))).toThrow(reason);
    });
  }
  for (const url of ALLOWED_URLS) {
    it(`allows ${url}`, () => {
      expect(() => checkEndpointUrl(new URL(url))).not.toThrow();
    });
  }
});

describe('endpoint safety: addresses', () => {
  it('classifies resolved addresses, including zone ids and embedded IPv4', () => {
    expect(refusedAddressReason('169.254.169.254')).toMatch(/metadata/);
    expect(refusedAddressReason('fe80::1%eth0')).toMatch(/link-local/);
    expect(refusedAddressReason('::ffff:169.254.0.1')).toMatch(/link-local/);
    expect(refusedAddressReason('::169.254.169.254')).toMatch(/metadata/);
    expect(refusedAddressReason('::1')).toBeUndefined();
    expect(refusedAddressReason('::')).toBeUndefined();
    expect(refusedAddressReason('127.0.0.1')).toBeUndefined();
    expect(refusedAddressReason('not an address')).toBeUndefined();
  });

  it('refuses a name when any of its addresses is refused, and returns them all otherwise', async () => {
    const overrides = hostOverridesFrom({
      DELEGATE_HOSTS_FOR_TEST:
        'evil.test=169.254.169.254, mixed.test=127.0.0.1, mixed.test=fe80::1, ok.test=127.0.0.1, ok.test=::1, bad=not-ip',
    });
    await expect(resolveChecked('evil.test', overrides)).rejects.toThrow(
      /evil\.test resolves to 169\.254\.169\.254, the cloud metadata address/,
    );
    await expect(resolveChecked('MIXED.test.', overrides)).rejects.toThrow(
      /resolves to fe80::1, a link-local address/,
    );
    await expect(resolveChecked('metadata.google.internal', overrides)).rejects.toThrow(
      RefusedEndpointError,
    );
    expect(await resolveChecked('ok.test', overrides)).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(overrides.has('bad')).toBe(false);
  });
});
