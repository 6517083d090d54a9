import type { Principal } from './auth.ts';
import { DomainError } from './errors.ts';
import type { Deps, PartnerFamily } from './ports.ts';
import type { WebhookConfig } from './webhook-config.ts';

export interface PollingScope {
  config: WebhookConfig;
  /** The account owning the configuration and its direct children. */
  partnerIds: string[];
}

/**
 * A partner's partner-scoped configuration: its own, else its master's (SPEC §4.2, §5.4). The account that owns
 * it decides the visible scope, and its transformer, version, URL and key serve the partner (CONTRACT §6).
 */
export const partnerConfigOf = (family: PartnerFamily | null): WebhookConfig | null =>
  family?.ownConfig ?? (family?.account.parentId ? family.masterConfig : null);

/**
 * What a partner may poll: the orders of the account that owns its resolved configuration and of that
 * account's direct children. A child with a configuration of its own sees its own orders only; one that
 * resolves to its master's sees the master's and all siblings'. No configuration: 403.
 */
export async function resolvePollingScope(deps: Pick<Deps, 'accounts'>, principal: Principal): Promise<PollingScope> {
  const family = await deps.accounts.partnerFamily(principal.accountId);
  const config = partnerConfigOf(family);
  if (!family || !config)
    throw new DomainError(
      'FORBIDDEN',
      'No partner-scoped webhook configuration exists for this account or its master.',
    );
  return config === family.ownConfig
    ? { config, partnerIds: [family.account.id, ...family.childIds] }
    : { config, partnerIds: [family.account.parentId!, ...family.siblingIds] };
}
