import type { MailMessage } from '../auth.ts';
import type { SentAttempt } from '../delivery.ts';

// What leaves the service: webhooks to integrators' endpoints, and mail.

export interface WebhookTargetPolicy {
  /** Why the URL may not receive webhooks (scheme, or an address that is not public), or null when it may. */
  refusalReason(url: string): Promise<string | null>;
}

export interface WebhookRequest {
  url: string;
  /** `_eid`: the `webhook-id` header. */
  eventId: string;
  /** The exact bytes to send and sign. */
  body: string;
  /** The keys to sign with, the current one first (none: unsigned); see `keysInForce`. */
  signatureKeys: readonly string[];
  /** The private keys to sign with asymmetrically (`v1a`), the current one first (absent: none); see `pairsInForce`. */
  asymmetricKeys?: readonly string[];
  /** An example sent by an endpoint test (CONTRACT §11), marked `webhook-test: 1`; a delivery is not. */
  test?: boolean;
  /** The attempt's trace context, sent as `traceparent` (CONTRACT §13): a receiver that traces continues it. */
  traceparent?: string | null;
}

export interface WebhookSender {
  /**
   * Sends the event once (one durable attempt, whatever the answer: the next waits for the schedule); the target is
   * checked at connection time. Only a request that a reused keep-alive connection dropped before any answer is sent
   * again at once on a new connection, within the attempt. Answers the attempt's outcome; never throws for the
   * receiver's faults. Says what was sent and answered.
   */
  send(request: WebhookRequest): Promise<SentAttempt>;
}

/** Addresses integrators follow from the mails, under the service's public address (CONTRACT §1 `PUBLIC_URL`). */
export interface Links {
  /** The portal's sign-in with this refresh token: `PUBLIC_URL/portal/#refresh=<token>`. */
  portalSignIn(refreshToken: string): string;
  /** The portal's Deliveries page showing the failed ones: `PUBLIC_URL/portal/#/deliveries?status=failed`. */
  portalFailedDeliveries(): string;
}

export interface Mailer {
  /** Resolves once the message is handed over; rejects when it could not be. */
  send(message: MailMessage): Promise<void>;
}
