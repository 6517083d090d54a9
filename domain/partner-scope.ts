import type { Account } from './account.ts';
import type { Principal } from './auth.ts';
import { DomainError } from './errors.ts';
import type { Deps, PartnerFamily } from './ports.ts';
import type { WebhookConfig } from './webhook-config.ts';

/**
 * A partner's partner-scoped configuration: its own, else its master's (SPEC §4.2, §5.4). The account
 * that owns the result decides the visible scope and receives nothing more than that scope's orders.
 */
export async function resolvePartnerConfig(
  deps: Pick<Deps, 'webhookConfigs'>,
  partner: Account,
): Promise<WebhookConfig | null> {
  const own = await deps.webhookConfigs.find(partner.id, 'partner');
  if (own || partner.parentId === null) return own;
  return deps.webhookConfigs.find(partner.parentId, 'partner');
}

export interface PollingScope {
  config: WebhookConfig;
  /** The account owning the configuration and its direct children. */
  partnerIds: string[];
}

/**
 * What a partner may poll: the orders of the account that owns its resolved configuration and of that
 * account's direct children. A child with a configuration of its own sees its own orders only; one that
 * resolves to its master's sees the master's and all siblings'. No configuration: 403.
 */
/** The same rule on facts read in one go: the family's own configuration, else its master's. */
export const partnerConfigOf = (family: PartnerFamily | null): WebhookConfig | null =>
  family?.ownConfig ?? (family?.account.parentId ? family.masterConfig : null);

export async function resolvePollingScope(deps: Pick<Deps, 'accounts'>, principal: Principal): Promise<PollingScope> {
  const family = await deps.accounts.partnerFamily(principal.accountId);
  if (family?.ownConfig) return { config: family.ownConfig, partnerIds: [family.account.id, ...family.childIds] };
  if (family?.masterConfig && family.account.parentId) {
    return { config: family.masterConfig, partnerIds: [family.account.parentId, ...family.siblingIds] };
  }
  throw new DomainError('FORBIDDEN', 'No partner-scoped webhook configuration exists for this account or its master.');
}
