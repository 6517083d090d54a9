import http from 'node:http';
import * as assert from 'uvu/assert';
import { document } from '../../support/app.ts';
import { answerChecker } from '../../support/openapi-validation.ts';
import { HANG_MS } from './support.ts';

// Requests with a deadline, so that a hang shows as one, and what an answer refused during a fault must look like.
export interface Outcome {
  what: string;
  status: number | null;
  error?: string;
  body: string;
  contentType: string;
  retryAfter?: string | null;
  requestId?: string | null;
  method: string;
  url: string;
  startedAt: number;
  ms: number;
}

/** One request with a deadline (HANG_MS): its status, or the network error or `hung` in its place, and its duration. */
export async function timed(what: string, url: string, init: RequestInit & { token?: string } = {}): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const res = await fetch(url, {
      ...init,
      headers: {
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
        ...(init.token && { authorization: `Bearer ${init.token}` }),
      },
      signal: AbortSignal.timeout(HANG_MS),
    });
    const body = await res.text();
    return {
      what,
      status: res.status,
      body,
      contentType: res.headers.get('content-type') ?? '',
      retryAfter: res.headers.get('retry-after'),
      requestId: res.headers.get('x-request-id'),
      method: (init.method ?? 'GET').toLowerCase(),
      url,
      startedAt,
      ms: Date.now() - startedAt,
    };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string } };
    return {
      what,
      status: null,
      error: e.name === 'TimeoutError' ? 'hung' : (e.cause?.code ?? e.message),
      body: '',
      contentType: '',
      method: (init.method ?? 'GET').toLowerCase(),
      url,
      startedAt,
      ms: Date.now() - startedAt,
    };
  }
}

/** One POST on a connection of its own (nothing kept alive for a closing listener to race with). */
export function postAlone(
  port: number,
  path: string,
  token: string,
  body: string,
  host = '127.0.0.1',
): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host,
        port,
        path,
        method: 'POST',
        agent: false,
        timeout: HANG_MS,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode! }));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({ error: 'hung' });
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(body);
  });
}

const checkAnswer = answerChecker(document());

/**
 * Every failure is a 503 SERVICE_UNAVAILABLE problem with Retry-After, as documented, and tells nothing of its cause.
 */
export function assertUnavailable(failures: readonly Outcome[]) {
  assert.equal(
    failures.filter((o) => o.status !== 503).map((o) => `${o.what} ${o.status}: ${o.body.slice(0, 200)}`),
    [],
    'failures besides 503',
  );
  for (const failure of failures) {
    assert.match(failure.contentType, /^application\/problem\+json/, `${failure.what} ${failure.status}`);
    const problem = JSON.parse(failure.body) as Record<string, unknown>;
    assert.is(problem.status, 503);
    assert.is(problem.code, 'SERVICE_UNAVAILABLE');
    assert.is(failure.retryAfter, '5', `${failure.what}: Retry-After`);
    checkAnswer(failure.method, failure.url, {
      status: 503,
      headers: { 'content-type': failure.contentType, 'x-request-id': failure.requestId },
      body: problem,
      text: failure.body,
    } as never);
    assert.not.match(
      failure.body,
      /ECONNREFUSED|SQLSTATE|57P0|timeout|\bat \S+:\d+|node_modules|stack/i,
      `${failure.what} tells the failure: ${failure.body.slice(0, 300)}`,
    );
  }
}
