import { TRPCError } from '@trpc/server';
import type { Principal } from '../../domain/auth.ts';
import { DomainError } from '../../domain/errors.ts';
import type { Context } from '../context.ts';
import { translateError } from '../errors.ts';
import { partnerCommands } from '../routers/partner-commands.contract.ts';

/**
 * A partner command, its outcome logged in one line whatever ends it after the token (the signature included), as the
 * executor logs a brand command's: its `_cid` (in the fields, never in the message: it is the sender's text), the
 * account, the command and its outcome or error code; never the body, and its `_cid` and `_type` only as the schema
 * would take them.
 */
export async function withOutcomeLogged<T>(
  ctx: Context,
  principal: Principal,
  path: string,
  getRawInput: () => Promise<unknown>,
  run: () => Promise<T>,
): Promise<T> {
  const log = async (failure: unknown) => {
    const body = partnerCommands.logged.parse(await getRawInput().catch(() => undefined));
    const error =
      failure === null
        ? undefined
        : translateError(
            failure instanceof TRPCError ? failure : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: failure }),
          );
    const code = error && (error.cause instanceof DomainError ? error.cause.code : error.code);
    ctx.log.info(
      {
        _cid: body._cid,
        account: principal.accountId,
        type: body._type ?? path,
        outcome: code ? 'failed' : 'succeeded',
        ...(code && { code }),
      },
      code ? `partner command failed: ${code}` : 'partner command succeeded',
    );
  };
  try {
    const result = await run();
    await log(null);
    return result;
  } catch (error) {
    await log(error);
    throw error;
  }
}
