import type { Role } from './account.ts';

export type TokenKind = 'refresh' | 'access';

/** What a token says about its bearer: the contact, its account and the account's role. */
export interface TokenClaims {
  contactId: string;
  accountId: string;
  role: Role;
}

/** The authenticated caller of an integrator endpoint. */
export type Principal = TokenClaims;

export const REFRESH_TOKEN_LIFETIME_SECONDS = 24 * 3600;
export const ACCESS_TOKEN_LIFETIME = { min: 60, max: 86_400, default: 3600 } as const;

/** The one answer to every well-formed login, registered address or not (CONTRACT §4). */
export const LOGIN_STATUS_MESSAGE =
  'If the e-mail address is registered for API access, a refresh token has been sent to it.';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Plain text, the token alone on its own line and never inside a link, so that mail scanners cannot use it up. */
export function refreshTokenMail(to: string, token: string, expiresAt: Date, signInLink: string): MailMessage {
  return {
    to,
    subject: 'Your API refresh token',
    text: [
      'Hello,',
      '',
      'sign in to the integrator portal with this link (it holds the token below):',
      '',
      signInLink,
      '',
      `Or use the refresh token yourself. It is valid until ${expiresAt.toISOString()} and can only be`,
      'exchanged for access tokens (POST /v3/auth/access-token with "Authorization: Bearer <refresh token>").',
      '',
      token,
      '',
      'If you did not ask for it, you can ignore this message; nobody can use it without access to this mailbox.',
      '',
    ].join('\n'),
  };
}
