import { RefusedEndpointError } from '../../wire/endpoint-safety.ts';
import { connectionCode, sendRequest } from '../../wire/http-request.ts';
import { ProviderError } from '../../wire/spec.ts';

const TIMEOUT_MS = 15_000;

export interface GitHubAnswer {
  status: number;
  /** The parsed JSON body, or undefined when it was not JSON. */
  body: unknown;
}

/**
 * One JSON exchange with GitHub (device flow, token endpoint) through the same endpoint-safe
 * client as model calls: checked addresses, no redirects followed. `secrets` (tokens and device
 * codes this exchange carries) are cut out of every error message before it leaves.
 */
export async function githubJson(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: unknown },
  secrets: readonly string[],
): Promise<GitHubAnswer> {
  const controller = new AbortController();
  // Our own timer: Node 18/20 can lose AbortSignal.timeout to garbage collection.
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  try {
    const response = await sendRequest(url, {
      method: init.method,
      headers: {
        accept: 'application/json',
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: controller.signal,
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  } catch (error) {
    if (error instanceof RefusedEndpointError || error instanceof ProviderError) {
      error.message = redact(error.message, secrets);
      throw error;
    }
    if (controller.signal.aborted) {
      throw new ProviderError(`${url} did not answer within ${TIMEOUT_MS} ms.`, 'timeout');
    }
    const code = redact(connectionCode(error), secrets);
    throw new ProviderError(
      `Cannot reach ${url} (${code}).`,
      code === 'ECONNREFUSED' ? 'refused' : 'unreachable',
    );
  } finally {
    clearTimeout(timer);
  }
}

/** GitHub's own words from an error body (`message`, `error_description`, `error`), secrets cut out. */
export function githubMessage(body: unknown, secrets: readonly string[]): string {
  const fields = (body ?? {}) as Record<string, unknown>;
  const text = [fields.message, fields.error_description, fields.error].find(
    (value): value is string => typeof value === 'string' && value.length > 0,
  );
  // Before cutting to length, so no part of a secret survives the cut.
  return redact(text ?? '', secrets).slice(0, 300);
}

function redact(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets) {
    if (secret.length >= 6) clean = clean.split(secret).join('[redacted]');
  }
  return clean;
}
