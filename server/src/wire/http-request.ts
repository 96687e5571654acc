import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type * as Zlib from 'node:zlib';
import { VERSION } from '../util/version.ts';
import {
  RefusedEndpointError,
  checkEndpointUrl,
  checkedLookup,
  hostOverridesFrom,
} from './endpoint-safety.ts';
import { ProviderError } from './spec.ts';

/**
 * A response's headers as the clients read them: by name in any case, repeated ones joined with
 * ", ". Node's own parsed headers, not fetch's `Headers`, whose first use loads undici's fetch
 * internals into the process (tens of ms on a task's first turn) for a few lookups.
 */
export interface ResponseHeaders {
  get(name: string): string | null;
  has(name: string): boolean;
  forEach(visit: (value: string, name: string) => void): void;
}

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  /** The body as it arrives (decompressed); iterate it once. */
  body: AsyncIterable<Buffer>;
  text(): Promise<string>;
}

export interface HttpRequestInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/**
 * One HTTP exchange with a worker endpoint, on node:http rather than fetch because the socket
 * must connect to the address the safety check approved: the URL is checked first (scheme,
 * metadata names, literal and numeric addresses), then every address DNS gives for the name,
 * inside the connection's own lookup. Redirects are never followed (they would carry the key to
 * another host); one becomes an error naming where it pointed.
 */
export async function sendRequest(url: string, init: HttpRequestInit): Promise<HttpResponse> {
  const target = new URL(url);
  checkEndpointUrl(target);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const body = init.body === undefined ? undefined : Buffer.from(init.body);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = send(target, {
      method: init.method,
      headers: {
        accept: '*/*',
        'user-agent': `delegate/${VERSION}`,
        ...init.headers,
        ...(body ? { 'content-length': String(body.length) } : {}),
      },
      lookup: checkedLookup(hostOverridesFrom(process.env)),
      signal: init.signal,
    });
    request.once('response', resolve);
    request.once('error', reject);
    request.end(body);
  });
  const status = response.statusCode ?? 0;
  if (status >= 300 && status < 400 && response.headers.location) {
    response.resume();
    throw redirectError(url, status, response.headers.location);
  }
  const stream = decoded(response);
  return {
    status,
    headers: headersOf(response.headers),
    body: stream,
    text: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

function redirectError(url: string, status: number, location: string): Error {
  let where = location;
  try {
    const next = new URL(location, url);
    where = next.href;
    checkEndpointUrl(next);
  } catch (error) {
    if (error instanceof RefusedEndpointError) {
      return new RefusedEndpointError(
        `${url} redirected (HTTP ${status}) to ${where}, which is refused: ${error.message}`,
      );
    }
  }
  return new ProviderError(
    `${url} answered with a redirect (HTTP ${status}) to ${where}. Redirects are not followed ` +
      '(they would carry the key elsewhere): set baseUrl to the final address.',
    'http',
    status,
  );
}

/**
 * The body as sent, decompressed when it came compressed. zlib is loaded for such a reply only:
 * the endpoints workers talk to answer plain, and a worker waiting on its model holds less.
 */
function decoded(response: IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return response.pipe(zlib().createGunzip());
  if (encoding === 'deflate') return response.pipe(zlib().createInflate());
  if (encoding === 'br') return response.pipe(zlib().createBrotliDecompress());
  return response;
}

const zlib = () => createRequire(import.meta.url)('node:zlib') as typeof Zlib;

function headersOf(headers: IncomingHttpHeaders): ResponseHeaders {
  const valueOf = (value: string | string[] | undefined) =>
    Array.isArray(value) ? value.join(', ') : value;
  return {
    get: (name) => valueOf(headers[name.toLowerCase()]) ?? null,
    has: (name) => headers[name.toLowerCase()] !== undefined,
    forEach: (visit) => {
      for (const [name, value] of Object.entries(headers)) {
        const text = valueOf(value);
        if (text !== undefined) visit(text, name);
      }
    },
  };
}

/** The error code behind a failed connection, including refusals of the safety check. */
export function connectionCode(error: unknown): string {
  const direct = error as NodeJS.ErrnoException & { errors?: NodeJS.ErrnoException[] };
  return direct.code ?? direct.errors?.[0]?.code ?? direct.message;
}
