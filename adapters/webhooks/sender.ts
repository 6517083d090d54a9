import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import pRetry, { AbortError } from 'p-retry';
import { Agent, request } from 'undici';
import { isSuccess, type DeliveryAttempt } from '../../domain/delivery.ts';
import type { Clock, WebhookRequest, WebhookSender } from '../../domain/ports.ts';
import { hexSignature, standardWebhookSignature } from '../signatures.ts';
import { isPublicAddress } from './target-policy.ts';

export interface SenderOptions {
  /** WEBHOOK_TIMEOUT_MS: the longest an HTTP try may take, connection included. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: let loopback, private and link-local addresses through (local testing). */
  allowPrivateTargets: boolean;
  /** Keep-alive connections per origin. */
  connectionsPerOrigin: number;
  /** Quick tries after a transient failure (a reset connection, 502, 503) within one attempt. */
  quickRetries?: number;
  clock: Clock;
  /** How a host name is resolved when connecting (default: the system's resolver); tests give one of their own. */
  resolveAll?: ResolveAll;
}

/** Every address of a host name, as a connection would use them. */
export type ResolveAll = (hostname: string, family: number | undefined) => Promise<LookupAddress[]>;
const systemResolveAll: ResolveAll = (hostname, family) => dnsLookup(hostname, { all: true, verbatim: true, ...(family ? { family } : {}) });

const EXCERPT = 200;
const TRANSIENT_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

class RefusedTarget extends Error {
  override readonly name = 'RefusedTarget';
  readonly code = 'REFUSED_TARGET';
}

/**
 * DNS for outgoing connections: the host's addresses are resolved once, every one is checked, and the connection is
 * made to a checked one. There is no second lookup between check and connect, so a DNS answer that changes in
 * between (rebinding) cannot reach loopback or the metadata address.
 */
const checkedLookup = (allowPrivate: boolean, resolveAll: ResolveAll): LookupFunction => (hostname, options, callback) => {
  resolveAll(hostname, options.family === 4 || options.family === 6 ? options.family : undefined).then((addresses) => {
    const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      return callback(new RefusedTarget(`refused target: ${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not a public address`), '', 0);
    }
    if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  }, (error: NodeJS.ErrnoException) => callback(error, '', 0));
};

/** An address written into the URL needs no lookup, so it is checked here. */
function literalRefusal(url: URL, allowPrivate: boolean): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'refused target: the URL must use http or https';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host)) return `refused target: ${host} is not a public address`;
  return null;
}

/**
 * Sends webhooks with undici (a keep-alive pool per origin, through one agent), signed as CONTRACT §7 says. A try
 * that fails for a passing reason (a reset connection, 502, 503) is made again at once a few times (p-retry); the
 * durable retries are the delivery's own (WEBHOOK_RETRY_SCHEDULE). Redirects are not followed: a 3xx is a failure.
 */
export class UndiciWebhookSender implements WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      connect: { lookup: checkedLookup(options.allowPrivateTargets, options.resolveAll ?? systemResolveAll), timeout: options.timeoutMs },
    });
  }

  async send(webhook: WebhookRequest): Promise<DeliveryAttempt[]> {
    const first = await this.tryOnce(webhook);
    const tries = [first];
    // The usual case ends here; p-retry (and its cost) only after a passing failure.
    const quickRetries = webhook.once ? 0 : this.options.quickRetries ?? 2;
    if (quickRetries > 0 && !isSuccess(first.statusCode) && first.transient) {
      await pRetry(async () => {
        const attempt = await this.tryOnce(webhook);
        tries.push(attempt);
        if (!isSuccess(attempt.statusCode) && attempt.transient) throw new Error('transient');
        if (!isSuccess(attempt.statusCode)) throw new AbortError('not transient');
      }, { retries: quickRetries - 1, minTimeout: 20, maxTimeout: 200, factor: 3 }).catch(() => {});
    }
    return tries.map(({ transient: _, ...attempt }) => attempt);
  }

  private async tryOnce(webhook: WebhookRequest): Promise<DeliveryAttempt & { transient: boolean }> {
    const at = this.options.clock.now();
    const started = performance.now();
    const done = (statusCode: number | null, error: string | null, transient = false) =>
      ({ at, statusCode, durationMs: Math.round(performance.now() - started), error, transient });
    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return done(null, 'refused target: the URL is not valid');
    }
    const refusal = literalRefusal(url, this.options.allowPrivateTargets);
    if (refusal) return done(null, refusal);

    const timestamp = Math.floor(this.options.clock.now().getTime() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'partner-brand-api-webhooks/1',
      'webhook-id': webhook.eventId,
      'webhook-timestamp': String(timestamp),
    };
    if (webhook.signatureKey) {
      headers['x-webhook-signature'] = hexSignature(webhook.signatureKey, webhook.body);
      headers['webhook-signature'] = standardWebhookSignature(webhook.signatureKey, webhook.eventId, timestamp, webhook.body);
    }
    try {
      const res = await request(url, {
        dispatcher: this.agent, method: 'POST', headers, body: webhook.body, signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      if (isSuccess(res.statusCode)) {
        await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
        return done(res.statusCode, null);
      }
      const excerpt = await readExcerpt(res.body);
      return done(res.statusCode, `HTTP ${res.statusCode}${excerpt ? `: ${excerpt}` : ''}`, res.statusCode === 502 || res.statusCode === 503);
    } catch (error) {
      return done(null, describe(error, this.options.timeoutMs), TRANSIENT_ERRORS.has(codeOf(error)));
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

const codeOf = (error: unknown): string => {
  const e = error as { code?: string; cause?: { code?: string } };
  return e.code ?? e.cause?.code ?? '';
};

function describe(error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: Error };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `timeout: no complete answer within ${timeoutMs} ms`;
  if (e instanceof RefusedTarget || e.cause instanceof RefusedTarget) return (e instanceof RefusedTarget ? e : e.cause!).message;
  const code = codeOf(error);
  return (code ? `${code}: ` : '') + (e.message ?? String(error)).slice(0, EXCERPT);
}

/** The start of a failed answer, for the log: a few hundred bytes at most, on one line. */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += chunk.toString('utf8');
      if (text.length >= EXCERPT) break;
    }
  } catch { /* what was read is enough */ } finally {
    body.destroy();
  }
  return text.slice(0, EXCERPT).replace(/\s+/g, ' ').trim();
}
