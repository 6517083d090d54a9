import { invalid, notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';
import { PREVIOUS_KEY_DEFAULT_SECONDS, type Scope, type WebhookConfig } from '../webhook-config.ts';

export interface RotateSignatureKeyInput {
  accountId: string;
  scope: Scope;
  /** The new HMAC key; absent (and not `asymmetric`): one is made (CONTRACT §11, generated keys). */
  signatureKey?: string;
  /** Rotates the Ed25519 pair instead of the HMAC key. */
  asymmetric?: boolean;
  /** Seconds the current key (or pair) stays valid beside the new one; absent: a day. */
  previousKeyValidFor?: number;
}

/**
 * Key rotation (CONTRACT §11): the account's own configuration of that scope (none: 404, as GET) takes the new key,
 * and its current key stays valid for the window: webhooks carry a signature with each, and partner commands may be
 * signed with either, so that the integrator can move its receiver and its client over without losing anything.
 * Without a key, one is made and answered (`generatedKey`, shown this once): for an endpoint without a key it becomes
 * the key at once, with nothing to keep. With `asymmetric`, the key pair is rotated the same way (409 while asymmetric
 * signing is off). The row is read locked (two rotations at once chain, the second keeping the first's key as the
 * previous one) and only the keys are written back: a disable recorded meanwhile is not undone.
 */
export async function rotateSignatureKey(
  deps: Pick<Deps, 'webhookConfigs' | 'clock' | 'keys'>,
  input: RotateSignatureKeyInput,
): Promise<{ config: WebhookConfig; generatedKey: string | null }> {
  if (input.asymmetric && input.signatureKey !== undefined) {
    throw invalid(
      'asymmetric',
      'Rotate either the signature key (signatureKey) or the key pair (asymmetric), not both at once.',
    );
  }
  const config = await deps.webhookConfigs.findForChange(input.accountId, input.scope);
  if (!config) throw notFound('A webhook configuration of your own');
  const now = deps.clock.now();
  config.dropExpiredKey(now);
  const validFor = input.previousKeyValidFor ?? PREVIOUS_KEY_DEFAULT_SECONDS;
  let generatedKey: string | null = null;
  if (input.asymmetric) {
    config.rotatePair(deps.keys.newKeyPair(), validFor, now);
  } else if (input.signatureKey !== undefined) {
    config.rotateKey(input.signatureKey, validFor, now);
  } else {
    generatedKey = deps.keys.newSecretKey();
    if (config.signatureKey === null) config.replaceKey(generatedKey);
    else config.rotateKey(generatedKey, validFor, now);
  }
  config.updatedAt = now;
  await deps.webhookConfigs.saveKeys(config);
  return { config, generatedKey };
}
