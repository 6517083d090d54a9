import type { MailMessage } from './auth.ts';
import { endpointUrlAsText } from './webhook-config.ts';

// Endpoint health (CONTRACT §11): an endpoint fails from its first attempt without a 2xx after its last 2xx (or after
// its URL was set); the first delivery that ends failed while it fails warns its contacts (once per failing period,
// never twice within a day), and one that ends failed once it has failed for WEBHOOK_DISABLE_AFTER disables it.

export type DisabledReason = 'failing' | 'integrator';
export const DISABLED_REASONS: readonly DisabledReason[] = ['failing', 'integrator'];

/** Contacts are warned about a failing endpoint once per failing period, and never more often than this. */
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
 * the repository contract holds both to it): `answered` are the attempts actually sent to the endpoint's current URL,
 * with any 2xx already recorded from an attempt after the batch's first failure (one that started later and was
 * recorded first), `endedFailed` the deliveries whose last attempt was used up. A stored failure later than the
 * batch's last 2xx (a batch recorded after a later one) still stands.
 *
 * Contacts are warned once per failing period (not mailed since it began), and never twice within WARN_EVERY_MS: a
 * period that ends and starts again within the day sends nothing.
 */
export function judgeEndpoint(
  health: EndpointHealth,
  answered: readonly { at: Date; ok: boolean }[],
  endedFailed: number,
  now: Date,
  disableAfterMs: number,
): EndpointVerdict {
  const lastOk = Math.max(...answered.filter((a) => a.ok).map((a) => a.at.getTime()), -Infinity);
  const firstBadAfter = Math.min(
    ...answered.filter((a) => !a.ok && a.at.getTime() > lastOk).map((a) => a.at.getTime()),
    Infinity,
  );
  const stored = health.failingSince?.getTime() ?? Infinity;
  // Batches may be recorded out of order: a 2xx ends only the failing that began before it.
  const since = Number.isFinite(lastOk)
    ? Math.min(firstBadAfter, stored > lastOk ? stored : Infinity)
    : Number.isFinite(stored)
      ? stored
      : firstBadAfter;
  const failingSince = Number.isFinite(since) ? new Date(since) : null;
  const failedWhileFailing = failingSince !== null && endedFailed > 0 && health.enabled;
  const disable = failedWhileFailing && now.getTime() - failingSince.getTime() >= disableAfterMs;
  const mailed = health.failureMailedAt;
  const warn =
    failedWhileFailing &&
    !disable &&
    (mailed === null || (mailed < failingSince && now.getTime() - mailed.getTime() >= WARN_EVERY_MS));
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

/** `failedDeliveriesLink`: where the portal lists what failed (`Links.portalFailedDeliveries`). */
export function endpointNoticeMail(to: string, notice: EndpointNotice, failedDeliveriesLink: string): MailMessage {
  const url = notice.url === null ? '(no URL)' : endpointUrlAsText(notice.url);
  const since = notice.failingSince.toISOString();
  const what =
    notice.kind === 'disabled'
      ? [
          `Your webhook endpoint ${url} has failed since ${since} and has been disabled: no deliveries are made to it until`,
          'you enable it again. Its events stay available from GET /v3/events.',
        ]
      : [
          `Your webhook endpoint ${url} has failed since ${since}: deliveries to it are failing.`,
          'If it goes on failing it will be disabled.',
        ];
  return {
    to,
    subject: notice.kind === 'disabled' ? `Webhook endpoint disabled: ${url}` : `Webhook endpoint failing: ${url}`,
    text: [
      'Hello,',
      '',
      ...what,
      `Failed deliveries: ${notice.failedDeliveries}.`,
      `See what failed: ${failedDeliveriesLink}`,
      '',
      'To heal it, once your endpoint answers 2xx again:',
      ...(notice.kind === 'disabled' ? ['- enable it: PUT /v3/webhook-config with "enabled": true;'] : []),
      '- send what failed again: POST /v3/webhook-deliveries/redeliver-failed with { "since": "<ISO 8601 time>" };',
      "- see each attempt's request and answer: GET /v3/webhook-deliveries?status=failed and GET /v3/webhook-deliveries/{id}.",
      '',
    ].join('\n'),
  };
}
