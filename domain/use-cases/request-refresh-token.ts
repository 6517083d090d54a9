import { LOGIN_STATUS_MESSAGE, REFRESH_TOKEN_LIFETIME_SECONDS, refreshTokenMail } from '../auth.ts';
import { isEmail, normalizeEmail } from '../contact.ts';
import { DomainError, invalid } from '../errors.ts';
import type { Deps } from '../ports.ts';

/**
 * Step one of the login. The answer is the same, and takes the same path, for every well-formed address:
 * whether a mail goes out is decided after the answer, so neither body nor timing tells who is registered.
 */
export async function requestRefreshToken(
  deps: Pick<Deps, 'loginLimiter' | 'deferrer'>,
  input: { email: string; clientAddress: string },
): Promise<{ status: string }> {
  const email = normalizeEmail(input.email);
  if (!isEmail(email)) throw invalid('email', 'A valid e-mail address is required.');
  const retryAfter = await deps.loginLimiter.consume(email, input.clientAddress);
  if (retryAfter !== null)
    throw new DomainError('RATE_LIMITED', 'Too many login requests; try again later.', [], retryAfter);
  deps.deferrer.defer('mail-refresh-token', async (later) => {
    await mailRefreshToken(later, email);
  });
  return { status: LOGIN_STATUS_MESSAGE };
}

/** Sends a refresh token to a contact with API access; does nothing for any other address. */
async function mailRefreshToken(
  deps: Pick<Deps, 'contacts' | 'accounts' | 'tokens' | 'mailer' | 'links' | 'clock'>,
  email: string,
): Promise<boolean> {
  const contact = await deps.contacts.findByEmail(email);
  if (!contact?.apiAccess) return false;
  const account = await deps.accounts.get(contact.accountId);
  if (!account) return false;
  const now = deps.clock.now();
  const token = await deps.tokens.issue(
    'refresh',
    { contactId: contact.id, accountId: account.id, role: account.role },
    now,
    REFRESH_TOKEN_LIFETIME_SECONDS,
  );
  const expiresAt = new Date(now.getTime() + REFRESH_TOKEN_LIFETIME_SECONDS * 1000);
  await deps.mailer.send(refreshTokenMail(contact.email, token, expiresAt, deps.links.portalSignIn(token)));
  return true;
}
