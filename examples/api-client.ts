// A small client of the REST API for your integration: tokens, both listings, commands and their results, with
// retries that are safe to make and errors you can branch on. Node 20's fetch, nothing else.
import { createHmac } from 'node:crypto';

/** A failure the API answered: RFC 9457 problem details. Branch on `code`, show `detail`, log `requestId`. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly issues: { path: string; message: string }[] = [],
    readonly requestId?: string,
  ) {
    super(`${status} ${code}: ${detail}${issues.map((i) => `\n  ${i.path || '(body)'}: ${i.message}`).join('')}`);
  }
}

export interface Session {
  baseUrl: string;
  accessToken: string;
}

interface Call {
  method?: 'GET' | 'POST' | 'PUT';
  token?: string;
  body?: string;
  headers?: Record<string, string>;
  /** Whether repeating the request changes nothing (default: GET only). */
  idempotent?: boolean;
  /** For the whole exchange, the answer's body included (default 30 s). */
  timeoutMs?: number;
}

/** `path` under the base URL, keeping a path the base URL has (a gateway's prefix, say). */
const endpoint = (baseUrl: string, path: string) =>
  new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);

/**
 * One request, tried again when that is safe: after a 429 or 503 (waiting `Retry-After` when it is given), and after
 * a network failure, a timeout or another 5xx only for a request that changes nothing when repeated (a GET, or a
 * command: its `_cid` makes a repeat answer the first outcome). At most 5 tries, waiting 0.5 s, 1 s, 2 s… between them.
 * Answers the status and the parsed body (null for 204).
 */
async function call<T>(baseUrl: string, path: string, options: Call = {}): Promise<{ status: number; body: T }> {
  const idempotent = options.idempotent ?? (options.method ?? 'GET') === 'GET';
  for (let attempt = 1; ; attempt++) {
    let answer: { status: number; retryAfter: number; text: string } | undefined;
    try {
      const res = await fetch(endpoint(baseUrl, path), {
        method: options.method ?? 'GET',
        headers: {
          ...(options.body !== undefined && { 'content-type': 'application/json' }),
          ...(options.token && { authorization: `Bearer ${options.token}` }),
          ...options.headers,
        },
        body: options.body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
      answer = { status: res.status, retryAfter: Number(res.headers.get('retry-after')), text: await res.text() };
    } catch (error) {
      if (!idempotent || attempt === 5) throw error;
    }
    if (answer && answer.status < 400)
      return { status: answer.status, body: (answer.text ? JSON.parse(answer.text) : null) as T };
    const again =
      attempt < 5 &&
      (!answer || answer.status === 429 || answer.status === 503 || (idempotent && answer.status >= 500));
    if (answer && !again) {
      let problem: { code?: string; detail?: string; issues?: ApiProblem['issues']; requestId?: string } = {};
      try {
        problem = JSON.parse(answer.text);
      } catch {
        /* not problem+json: a proxy's page, say */
      }
      throw new ApiProblem(
        answer.status,
        problem.code ?? 'UNKNOWN',
        problem.detail ?? answer.text.slice(0, 200),
        problem.issues,
        problem.requestId,
      );
    }
    const retryAfter = answer?.retryAfter ?? 0;
    await new Promise((resolve) => setTimeout(resolve, retryAfter > 0 ? retryAfter * 1000 : 500 * 2 ** (attempt - 1)));
  }
}

/** Step one of the login: a refresh token (valid 24 h) is mailed to the contact, if it has API access. */
export async function requestRefreshToken(baseUrl: string, email: string): Promise<void> {
  await call(baseUrl, '/v3/auth/login', { method: 'POST', body: JSON.stringify({ email }) });
}

/** Step two, as often as you need: an access token for 60…86400 seconds. Answers the session to call the API with. */
export async function logIn(baseUrl: string, refreshToken: string, expiresAfterSeconds = 3600): Promise<Session> {
  const { body } = await call<{ access_token: string }>(baseUrl, '/v3/auth/access-token', {
    method: 'POST',
    token: refreshToken,
    body: JSON.stringify({ expires_after: expiresAfterSeconds }),
    idempotent: true,
  });
  return { baseUrl, accessToken: body.access_token };
}

/** An OrderStatusEvent in your configuration's shape: `jobApiId`… for partners (`partner-format`), `orderId`… for brands. */
export type Order = Record<string, unknown> & { status: string; updatedAt?: string };

/**
 * Every order in your scope, newest `updatedAt` first, through the paginated listing. Pass `updatedSince` (the
 * `updatedAt` of the newest order you have seen) to fetch only what changed since: orders with `updatedAt >= updatedSince`.
 */
export async function* allOrders(
  session: Session,
  filter: { updatedSince?: string; active?: boolean; pageSize?: number } = {},
): AsyncGenerator<Order> {
  const pageSize = filter.pageSize ?? 200;
  for (let page = 1; ; page++) {
    const query = new URLSearchParams({ page: String(page), pageSize: String(pageSize) });
    if (filter.updatedSince) query.set('updatedSince', filter.updatedSince);
    if (filter.active) query.set('active', 'true');
    const { body } = await call<{ items: Order[]; pageSize: number }>(
      session.baseUrl,
      `/v3/partner-orders/paginated?${query}`,
      { token: session.accessToken },
    );
    yield* body.items;
    // The page size the answer used (sizes above 200 are served as 200): a shorter page is the last one.
    if (body.items.length < body.pageSize) return;
  }
}

/**
 * One page of the legacy listing (a bare array, same order); without `limit` it streams every order at once, which
 * for a large scope takes a while: it gets 10 minutes instead of 30 s.
 */
export async function legacyOrders(session: Session, page: { limit?: number; offset?: number } = {}): Promise<Order[]> {
  const query = new URLSearchParams();
  if (page.limit !== undefined) query.set('limit', String(page.limit));
  if (page.offset !== undefined) query.set('offset', String(page.offset));
  const { body } = await call<Order[]>(session.baseUrl, `/v3/partner-orders?${query}`, {
    token: session.accessToken,
    timeoutMs: page.limit === undefined ? 600_000 : 30_000,
  });
  return body;
}

/** One order by its id (the job's `apiId`), as its current OrderStatusEvent in your configured version (`*`). */
export async function order(session: Session, orderId: string): Promise<Order> {
  return (
    await call<Order>(session.baseUrl, `/v3/poll/job/*/${encodeURIComponent(orderId)}`, { token: session.accessToken })
  ).body;
}

export interface Command {
  _v: string;
  _cid: string;
  _type: string;
  _metadata?: Record<string, unknown>;
  [member: string]: unknown;
}

/**
 * A brand command: stored and answered `accepted` at once, run shortly after. Sending the same command again (after
 * a timeout, say) is safe: the same `_cid` with the same body gets the first answer and runs nothing, for 24 hours
 * after the command finished. Use a new `_cid` for every new change.
 */
export async function sendBrandCommand(
  session: Session,
  command: Command,
): Promise<{ _cid: string; status: 'accepted' }> {
  return (
    await call<{ _cid: string; status: 'accepted' }>(session.baseUrl, '/v3/commands', {
      method: 'POST',
      token: session.accessToken,
      body: JSON.stringify(command),
      idempotent: true,
    })
  ).body;
}

/**
 * A partner command (`appointment` or `your-order-id`), run at once. With a signature key on your partner
 * configuration, the body is signed: the hex HMAC-SHA256 of the exact bytes sent.
 */
export async function sendPartnerCommand(
  session: Session,
  kind: 'appointment' | 'your-order-id',
  command: Command,
  signatureKey?: string,
) {
  const body = JSON.stringify(command);
  const headers = signatureKey
    ? { 'x-webhook-signature': createHmac('sha256', signatureKey).update(body).digest('hex') }
    : undefined;
  return (
    await call<{ _cid: string; status: 'succeeded'; order: Order }>(session.baseUrl, `/v3/commands/partner/${kind}`, {
      method: 'POST',
      token: session.accessToken,
      body,
      headers,
      idempotent: true,
    })
  ).body;
}

export type CommandOutcome =
  | { _type: 'CommandResultEvent'; _cid: string; result: Record<string, unknown> }
  | { _type: 'CommandErrorEvent'; _cid: string; code: string; message: string; details: unknown };

/**
 * A command's outcome, polled until it is there (204 while it waits to run; kept 24 h). A command that failed is
 * a CommandErrorEvent with its `code`, not an exception: the request itself went well.
 */
export async function commandOutcome(session: Session, cid: string, timeoutMs = 30_000): Promise<CommandOutcome> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const { status, body } = await call<CommandOutcome>(session.baseUrl, `/v3/commands/${encodeURIComponent(cid)}`, {
      token: session.accessToken,
    });
    if (status === 200) return body;
    if (Date.now() > deadline) throw new Error(`command ${cid} has not run within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
