import type { Principal } from './auth.ts';
import { DomainError } from './errors.ts';
import type { Deps } from './ports.ts';
import { receiverOf } from './receivers.ts';
import type { WebhookConfig } from './webhook-config.ts';

/**
 * The caller's endpoint (CONTRACT §10): the configuration its events go to. A brand's own `brand` configuration (none:
 * 404, with what to do); a partner's resolved `partner` configuration, its own else its master's (none: 403, as on
 * the listings). A child without its own configuration so shares its master's feed and delivery log.
 */
export async function integratorEndpoint(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs'>,
  principal: Principal,
): Promise<WebhookConfig> {
  const { endpoint } = await receiverOf(deps, principal.accountId, principal.role);
  if (endpoint) return endpoint;
  if (principal.role === 'partner')
    throw new DomainError(
      'FORBIDDEN',
      'No partner-scoped webhook configuration exists for this account or its master.',
    );
  throw new DomainError(
    'NOT_FOUND',
    'Your account has no webhook configuration: create one with PUT /v3/webhook-config (a URL is optional); its events are kept from then on.',
  );
}
