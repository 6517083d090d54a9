import type { MailMessage } from './auth.ts';

// Endpoint health (CONTRACT §11): an endpoint fails from its first attempt without a 2xx after its last 2xx (or after
// its URL was set); a delivery that ends failed while it fails warns its contacts (once a day at most), and disables it
// once it has failed for WEBHOOK_DISABLE_AFTER.

export type DisabledReason = 'failing' | 'integrator';
export const DISABLED_REASONS: readonly DisabledReason[] = ['failing', 'integrator'];

/** Contacts are warned about a failing endpoint at most this often. */
export const WARN_EVERY_MS = 24 * 3600 * 1000;

/** What the health of an endpoint keeps between attempts. */
export interface EndpointHealth {
  failingSince: Date | null;
  enabled: boolean;
  /** When its contacts were last mailed about it. */
  failureMailedAt: Date | null;
}

/** What one batch of recorded attempts did to an endpoint. */
export interface EndpointVerdict {
  failingSince: Date | null;
  disable: boolean;
  warn: boolean;
}

/**
 * The rule, in one place (the SQL of adapters/persistence/delivery-queue.ts does the same in its record statement, and
 * the repository contract holds both to it): `answered` are the attempts actually sent to the endpoint, `endedFailed`
 * the deliveries whose last attempt was used up.
 */
export function judgeEndpoint(health: EndpointHealth, answered: readonly { at: Date; ok: boolean }[], endedFailed: number, now: Date, disableAfterMs: number): EndpointVerdict {
  const lastOk = Math.max(...answered.filter((a) => a.ok).map((a) => a.at.getTime()), -Infinity);
  const firstBadAfter = Math.min(...answered.filter((a) => !a.ok && a.at.getTime() > lastOk).map((a) => a.at.getTime()), Infinity);
  const firstBad = Number.isFinite(firstBadAfter) ? new Date(firstBadAfter) : null;
  const failingSince = Number.isFinite(lastOk) ? firstBad : (health.failingSince ?? firstBad);
  const failedWhileFailing = failingSince !== null && endedFailed > 0 && health.enabled;
  const disable = failedWhileFailing && now.getTime() - failingSince.getTime() >= disableAfterMs;
  const warn = failedWhileFailing && !disable && (health.failureMailedAt === null || now.getTime() - health.failureMailedAt.getTime() >= WARN_EVERY_MS);
  return { failingSince, disable, warn };
}

/** What a record decided to tell an endpoint's contacts: sent after it committed. */
export interface EndpointNotice {
  kind: 'failing' | 'disabled';
  endpointId: string;
  accountId: string;
  url: string | null;
  failingSince: Date;
  /** The endpoint's failed deliveries, this batch's included. */
  failedDeliveries: number;
}

export function endpointNoticeMail(to: string, notice: EndpointNotice): MailMessage {
  const url = notice.url ?? '(no URL)';
  const since = notice.failingSince.toISOString();
  const what = notice.kind === 'disabled'
    ? [`Your webhook endpoint ${url} has failed since ${since} and has been disabled: no deliveries are made to it until`,
      'you enable it again. Its events stay available from GET /v3/events.']
    : [`Your webhook endpoint ${url} has failed since ${since}: deliveries to it are failing.`,
      'If it goes on failing it will be disabled.'];
  return {
    to,
    subject: notice.kind === 'disabled' ? `Webhook endpoint disabled: ${url}` : `Webhook endpoint failing: ${url}`,
    text: [
      'Hello,',
      '',
      ...what,
      `Failed deliveries: ${notice.failedDeliveries}.`,
      '',
      'To heal it, once your endpoint answers 2xx again:',
      ...(notice.kind === 'disabled' ? ['- enable it: PUT /v3/webhook-config with "enabled": true;'] : []),
      '- send what failed again: POST /v3/webhook-deliveries/redeliver-failed with { "since": "<ISO 8601 time>" };',
      '- see each attempt\'s request and answer: GET /v3/webhook-deliveries?status=failed and GET /v3/webhook-deliveries/{id}.',
      '',
    ].join('\n'),
  };
}
