import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';
import { PREVIOUS_KEY_DEFAULT_SECONDS, type Scope, type WebhookConfig } from '../webhook-config.ts';

export interface RotateSignatureKeyInput {
  accountId: string;
  scope: Scope;
  signatureKey: string;
  /** Seconds the current key stays valid beside the new one; absent: a day. */
  previousKeyValidFor?: number;
}

/**
 * Key rotation (CONTRACT §11): the account's own configuration of that scope (none: 404, as GET) takes the new key,
 * and its current key stays valid for the window: webhooks carry a signature with each, and partner commands may be
 * signed with either, so that the integrator can move its receiver and its client over without losing anything. The row
 * is read locked (two rotations at once chain, the second keeping the first's key as the previous one) and only the keys
 * are written back: a disable recorded meanwhile is not undone.
 */
export async function rotateSignatureKey(deps: Pick<Deps, 'webhookConfigs' | 'clock'>, input: RotateSignatureKeyInput): Promise<WebhookConfig> {
  const config = await deps.webhookConfigs.findForChange(input.accountId, input.scope);
  if (!config) throw notFound('A webhook configuration of your own');
  const now = deps.clock.now();
  config.rotateKey(input.signatureKey, input.previousKeyValidFor ?? PREVIOUS_KEY_DEFAULT_SECONDS, now);
  config.updatedAt = now;
  await deps.webhookConfigs.saveKeys(config);
  return config;
}
