import type { Principal } from '../../domain/auth.ts';
import { checkCommandSignature } from '../../domain/use-cases/check-command-signature.ts';
import type { Context } from '../context.ts';

/** Partner commands: the signature over the raw bytes, before the body is read (CONTRACT §5). */
export function checkSignature(ctx: Context, principal: Principal): Promise<void> {
  return ctx.unit.statements((deps) =>
    checkCommandSignature(deps, principal, { rawBody: ctx.rawBody, signature: ctx.signature }),
  );
}
