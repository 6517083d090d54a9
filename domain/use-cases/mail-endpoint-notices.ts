import { type EndpointNotice, endpointNoticeMail } from '../endpoint-health.ts';
import type { Deps } from '../ports.ts';

/**
 * Tells every contact with API access of each notice's account what happened to its endpoint. Run after the record
 * that decided it has committed, holding no transaction: a mail that cannot be sent is reported and the others go on;
 * the state it tells of is stored whatever happens here.
 */
export async function mailEndpointNotices(
  deps: Pick<Deps, 'contacts' | 'mailer' | 'links'>,
  notices: readonly EndpointNotice[],
  failed: (error: unknown, notice: EndpointNotice) => void,
): Promise<void> {
  for (const notice of notices) {
    try {
      const emails = await deps.contacts.emailsWithApiAccess(notice.accountId);
      await Promise.all(
        emails.map((to) =>
          deps.mailer
            .send(endpointNoticeMail(to, notice, deps.links.portalFailedDeliveries()))
            .catch((error: unknown) => failed(error, notice)),
        ),
      );
    } catch (error) {
      failed(error, notice);
    }
  }
}
