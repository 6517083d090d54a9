import type { Account } from './account.ts';
import type { Deps } from './ports.ts';
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
