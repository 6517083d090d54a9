import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, Client, type Dispatcher, request } from 'undici';
import { isSuccess, type SentAttempt } from '../../domain/delivery.ts';
import type { Clock, WebhookRequest, WebhookSender } from '../../domain/ports.ts';
import { signatureHeaders } from '../signatures.ts';
import { wasDroppedUnanswered, watchConnectionReuse } from './connection-reuse.ts';
import { isPublicAddress } from './target-policy.ts';

export interface SenderOptions {
  /** WEBHOOK_TIMEOUT_MS: the longest an HTTP request may take, connection included. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: let loopback, private and link-local addresses through (local testing). */
  allowPrivateTargets: boolean;
  /** Keep-alive connections per origin. */
  connectionsPerOrigin: number;
  clock: Clock;
  /** How a host name is resolved when connecting (default: the system's resolver); tests give one of their own. */
  resolveAll?: ResolveAll;
}

/** Every address of a host name, as a connection would use them. */
export type ResolveAll = (hostname: string, family: number | undefined) => Promise<LookupAddress[]>;
const systemResolveAll: ResolveAll = (hostname, family) =>
  dnsLookup(hostname, { all: true, verbatim: true, ...(family ? { family } : {}) });

const EXCERPT = 200;

class RefusedTarget extends Error {
  override readonly name = 'RefusedTarget';
  readonly code = 'REFUSED_TARGET';
}

/**
 * DNS for outgoing connections: the host's addresses are resolved once, every one is checked, and the connection is
 * made to a checked one. There is no second lookup between check and connect, so a DNS answer that changes in
 * between (rebinding) cannot reach loopback or the metadata address.
 */
const checkedLookup =
  (allowPrivate: boolean, resolveAll: ResolveAll): LookupFunction =>
  (hostname, options, callback) => {
    resolveAll(hostname, options.family === 4 || options.family === 6 ? options.family : undefined).then(
      (addresses) => {
        const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
        if (refused || addresses.length === 0) {
          return callback(
            new RefusedTarget(
              `refused target: ${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not a public address`,
            ),
            '',
            0,
          );
        }
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };

/** An address written into the URL needs no lookup, so it is checked here. */
function literalRefusal(url: URL, allowPrivate: boolean): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'refused target: the URL must use http or https';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host))
    return `refused target: ${host} is not a public address`;
  return null;
}

/**
 * Sends webhooks with undici (a keep-alive pool per origin, through one agent), signed as CONTRACT §7 says. One send is
 * one attempt, whatever the answer: the retries are the delivery's own, after the delays of WEBHOOK_RETRY_SCHEDULE, so
 * that a struggling receiver gets time instead of a burst. Redirects are not followed: a 3xx is a failure.
 */
export class UndiciWebhookSender implements WebhookSender {
  private readonly agent: Agent;
  private readonly connect: Agent.Options['connect'];
  private readonly unwatch = watchConnectionReuse();

  constructor(private readonly options: SenderOptions) {
    this.connect = {
      lookup: checkedLookup(options.allowPrivateTargets, options.resolveAll ?? systemResolveAll),
      timeout: options.timeoutMs,
    };
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      connect: this.connect,
    });
  }

  async send(webhook: WebhookRequest): Promise<SentAttempt> {
    const at = this.options.clock.now();
    const started = performance.now();
    // What is stored is what is sent: these very headers, made once.
    const headers = this.headers(webhook);
    const request = { url: webhook.url, headers };
    const done = (
      statusCode: number | null,
      error: string | null,
      response: Answer['response'] = null,
    ): SentAttempt => ({
      at,
      statusCode,
      durationMs: Math.round(performance.now() - started),
      error,
      exchange: { request, response },
    });
    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return done(null, 'refused target: the URL is not valid');
    }
    const refusal = literalRefusal(url, this.options.allowPrivateTargets);
    if (refusal) return done(null, refusal);

    const first = await this.post(url, headers, webhook.body, this.agent);
    if (!first.droppedUnanswered) return done(first.statusCode, first.error, first.response);
    // A reused keep-alive connection dropped the request before any byte of an answer: the receiver closed it as idle
    // just then and never read the request. Sent again at once, as the same attempt, on a connection of its own (the
    // pool's other idle connections may be as stale as this one); that one is new, so this happens once at most.
    const fresh = new Client(url.origin, { connect: this.connect });
    try {
      const again = await this.post(url, headers, webhook.body, fresh);
      return done(
        again.statusCode,
        again.error && `${again.error} (sent again on a new connection: a reused one had dropped it unanswered)`,
        again.response,
      );
    } finally {
      await fresh.destroy().catch(() => {});
    }
  }

  private headers(webhook: WebhookRequest): Record<string, string> {
    const timestamp = Math.floor(this.options.clock.now().getTime() / 1000);
    return {
      'content-type': 'application/json',
      'user-agent': 'partner-brand-api-webhooks/1',
      'webhook-id': webhook.eventId,
      'webhook-timestamp': String(timestamp),
      ...(webhook.test && { 'webhook-test': '1' }),
      ...signatureHeaders(webhook.signatureKeys, webhook.eventId, timestamp, webhook.body, webhook.asymmetricKeys),
      // The attempt's own span (CONTRACT §13): a receiver that traces continues the trace. Nothing when tracing is off.
      ...(webhook.traceparent && { traceparent: webhook.traceparent }),
    };
  }

  /** One HTTP request within WEBHOOK_TIMEOUT_MS: its answer, or why none came. */
  private async post(url: URL, headers: Record<string, string>, body: string, dispatcher: Dispatcher): Promise<Answer> {
    try {
      const res = await request(url, {
        dispatcher,
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await readStart(res.body);
      const response = { headers: flatHeaders(res.headers), body: text };
      if (isSuccess(res.statusCode)) return { statusCode: res.statusCode, error: null, response };
      const excerpt = storable(text.replace(/\s+/g, ' ').trim());
      return { statusCode: res.statusCode, error: `HTTP ${res.statusCode}${excerpt ? `: ${excerpt}` : ''}`, response };
    } catch (error) {
      return {
        statusCode: null,
        error: describe(error, this.options.timeoutMs),
        response: null,
        droppedUnanswered: wasDroppedUnanswered(error),
      };
    }
  }

  close(): Promise<void> {
    this.unwatch();
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
  if (e instanceof RefusedTarget || e.cause instanceof RefusedTarget)
    return (e instanceof RefusedTarget ? e : e.cause!).message;
  const code = codeOf(error);
  return storable((code ? `${code}: ` : '') + (e.message ?? String(error)));
}

interface Answer {
  statusCode: number | null;
  error: string | null;
  response: { headers: Record<string, string>; body: string } | null;
  droppedUnanswered?: boolean;
}

/** How much of an answer's body is kept (CONTRACT §11). */
const RESPONSE_BODY_BYTES = 4096;

/** Read to its end up to this size, so that the connection can be used again; a longer answer closes it. */
const DRAIN_BYTES = 64 * 1024;

/** The answer's first RESPONSE_BODY_BYTES bytes as UTF-8 text (a character cut at the end is left out), storable. */
async function readStart(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body) {
      if (length < RESPONSE_BODY_BYTES) chunks.push(chunk);
      length += chunk.length;
      if (length > DRAIN_BYTES) break;
    }
  } catch {
    /* what was read is enough */
  } finally {
    body.destroy();
  }
  const start = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES);
  return storable(new TextDecoder('utf-8').decode(start, { stream: true }), Infinity);
}

/** Response headers as text PostgreSQL can hold; repeated ones joined as HTTP allows. */
function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = storable(Array.isArray(value) ? value.join(', ') : value, Infinity);
  }
  return flat;
}

/**
 * What a receiver answers is stored and shown: text PostgreSQL can hold (U+0000 and unpaired surrogates replaced; a
 * NUL in one attempt's error failed the record of a whole batch, every tenant's), cut at a character, not inside one.
 */
function storable(text: string, max = EXCERPT): string {
  const wellFormed = UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\ufffd') : text;
  // Cut by characters, not UTF-16 units; a text shorter than `max` units has fewer characters still.
  return wellFormed.length <= max ? wellFormed : Array.from(wellFormed).slice(0, max).join('');
}
const UNSTORABLE_SOURCE = '[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]|\\u0000';
const UNSTORABLE = new RegExp(UNSTORABLE_SOURCE);
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_SOURCE, 'g');
