import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';
import type { Scope, WebhookConfig } from '../webhook-config.ts';

/** The account's own configuration of that scope; a master's is not the child's own (404). */
export async function getWebhookConfig(
  deps: Pick<Deps, 'webhookConfigs' | 'clock'>,
  input: { accountId: string; scope: Scope },
): Promise<WebhookConfig> {
  const config = await deps.webhookConfigs.find(input.accountId, input.scope);
  if (!config) throw notFound('A webhook configuration of your own');
  config.dropExpiredKey(deps.clock.now());
  return config;
}
