import type { DeliveryAttempt, SentAttempt } from '../../domain/delivery.ts';
import type { Clock, WebhookRequest, WebhookSender } from '../../domain/ports.ts';
import { signatureHeaders } from '../signatures.ts';

/**
 * One outcome of a script: what the attempt found; a status comes with the answer's body (the error without its
 * "HTTP n: ").
 */
type ScriptedOutcome = Omit<DeliveryAttempt, 'at'>;

/**
 * A sender that sends nothing: each call answers its script's next outcome (the last one again once it runs out), with
 * the request stamped and signed as UndiciWebhookSender makes it, at the clock's time. The demo data's history is made
 * with it (server/seed-demo-history.ts).
 */
export class ScriptedWebhookSender implements WebhookSender {
  private sent = 0;

  constructor(
    private readonly script: readonly ScriptedOutcome[],
    private readonly clock: Clock,
  ) {}

  async send(request: WebhookRequest): Promise<SentAttempt> {
    const outcome = this.script[Math.min(this.sent++, this.script.length - 1)]!;
    const at = this.clock.now();
    const timestamp = Math.floor(at.getTime() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'partner-brand-api-webhooks/1',
      'webhook-id': request.eventId,
      'webhook-timestamp': String(timestamp),
      ...signatureHeaders(request.signatureKeys, request.eventId, timestamp, request.body, request.asymmetricKeys),
    };
    const body = (outcome.error ?? '').replace(/^HTTP \d+: /, '');
    const response =
      outcome.statusCode === null ? null : { headers: { 'content-type': 'text/plain; charset=utf-8' }, body };
    return { at, ...outcome, exchange: { request: { url: request.url, headers }, response } };
  }
}
