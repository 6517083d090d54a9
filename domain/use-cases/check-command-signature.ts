import type { Principal } from '../auth.ts';
import { DomainError } from '../errors.ts';
import { partnerConfigOf } from '../partner-scope.ts';
import type { Deps } from '../ports.ts';
import { keysInForce } from '../webhook-config.ts';

/**
 * When the caller's resolved partner configuration (its own, else its master's) has a key, the request must
 * carry `x-webhook-signature`: the HMAC-SHA256 of the exact request bytes. Checked before the body is read,
 * so that a forged request learns nothing about its body. Without a key the header is optional. While a rotated-out
 * key is still valid (CONTRACT §11), a signature made with it is accepted too.
 */
export async function checkCommandSignature(
  deps: Pick<Deps, 'accounts' | 'signatures' | 'clock'>,
  principal: Principal,
  request: { rawBody: Uint8Array | undefined; signature: string | undefined },
): Promise<void> {
  const config = partnerConfigOf(await deps.accounts.partnerFamily(principal.accountId));
  const keys = config ? keysInForce(config, deps.clock.now()) : [];
  if (keys.length === 0) return;
  const { signature, rawBody } = request;
  // Every key is tried, whichever matches: how long the check takes tells nothing of which key it was.
  if (!signature || !rawBody || !keys.map((key) => deps.signatures.matches(key, rawBody, signature)).includes(true)) {
    throw new DomainError(
      'REQUEST_UNAUTHENTICATED',
      'x-webhook-signature is missing or does not match the request body.',
    );
  }
}
