import type { Principal } from '../auth.ts';
import { DomainError } from '../errors.ts';
import { partnerConfigOf } from '../partner-scope.ts';
import type { Deps } from '../ports.ts';

/**
 * When the caller's resolved partner configuration (its own, else its master's) has a key, the request must
 * carry `x-webhook-signature`: the HMAC-SHA256 of the exact request bytes. Checked before the body is read,
 * so that a forged request learns nothing about its body. Without a key the header is optional.
 */
export async function checkCommandSignature(
  deps: Pick<Deps, 'accounts' | 'signatures'>,
  principal: Principal,
  request: { rawBody: Uint8Array | undefined; signature: string | undefined },
): Promise<void> {
  const key = partnerConfigOf(await deps.accounts.partnerFamily(principal.accountId))?.signatureKey ?? null;
  if (key === null) return;
  if (!request.signature || !request.rawBody || !deps.signatures.matches(key, request.rawBody, request.signature)) {
    throw new DomainError('UNAUTHENTICATED', 'x-webhook-signature is missing or does not match the request body.');
  }
}
