import { invalid, notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';
import {
  checkEndpointUrlText,
  type PayloadVersion,
  type Scope,
  type Transformer,
  WebhookConfig,
} from '../webhook-config.ts';

export interface UpsertWebhookConfigInput {
  accountId: string;
  scope: Scope;
  /** Absent keeps the current URL; null removes it. */
  url?: string | null;
  transformer: Transformer;
  version: PayloadVersion;
  /** Absent keeps the current key (and any rotation window); a key or null replaces it and ends the window. */
  signatureKey?: string | null;
  enabled?: boolean;
  /** Ed25519 (`v1a`) signatures beside the HMAC ones (CONTRACT §11); absent keeps the current setting. */
  asymmetricSigning?: boolean;
}

export async function upsertWebhookConfig(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'webhookTargets' | 'clock' | 'ids' | 'keys'>,
  input: UpsertWebhookConfigInput,
): Promise<WebhookConfig> {
  const account = await deps.accounts.get(input.accountId);
  if (!account) throw notFound('The account');
  if (account.role !== input.scope)
    throw invalid('scope', `A ${account.role} account can only have a ${account.role}-scoped configuration.`);
  if (input.url !== undefined && input.url !== null) {
    checkEndpointUrlText(input.url);
    const reason = await deps.webhookTargets.refusalReason(input.url);
    if (reason) throw invalid('url', reason);
  }

  const now = deps.clock.now();
  const current = await deps.webhookConfigs.findForChange(account.id, input.scope);
  const config =
    current ??
    new WebhookConfig({
      id: deps.ids.newId(),
      accountId: account.id,
      scope: input.scope,
      url: null,
      transformer: input.transformer,
      version: input.version,
      signatureKey: null,
      enabled: true,
      failingSince: null,
      disabledReason: null,
      failureMailedAt: null,
      createdAt: now,
      updatedAt: now,
    });
  config.configure(input.url === undefined ? config.url : input.url, input.enabled ?? true);
  if (input.signatureKey !== undefined) config.replaceKey(input.signatureKey);
  if (input.asymmetricSigning !== undefined)
    config.signAsymmetrically(input.asymmetricSigning, () => deps.keys.newKeyPair());
  config.dropExpiredKey(now);
  config.transformer = input.transformer;
  config.version = input.version;
  config.updatedAt = now;
  await deps.webhookConfigs.save(config);
  return config;
}
