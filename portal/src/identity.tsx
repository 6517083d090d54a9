import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api, call } from './api/client';
import type { CheckedLink, Identity } from './api/session';

// Who is signed in: the account's name and the contact's e-mail (GET /v3/me), with the ids in the tooltips. Until the
// names are known (or where they could not be read) the ids' first 8 characters stand for them.
const short = (id: string) => id.slice(0, 8);
const ROLE = { partner: 'Partner', brand: 'Brand' } as const;

/** "brand account Acme Ltd (ops@acme.test)": the words used wherever an identity is written out. */
export const describeIdentity = (who: Identity) =>
  who.accountName
    ? `${who.role} account ${who.accountName}${who.email ? ` (${who.email})` : ''}`
    : `${who.role} account ${short(who.accountId)}, contact ${short(who.contactId)}`;

/** GET /v3/me: the signed-in account (its name, role and master) and contact, asked once a session. */
export const useMe = () => useQuery({ queryKey: ['me'], queryFn: () => call(api.GET('/v3/me')), staleTime: Infinity });

/** The header's account line: the account by name, its role, and the contact by e-mail. */
export function Who({ who }: { who: Identity }) {
  const me = useMe();
  if (!me.data) {
    return (
      <span className="who" data-testid="identity">
        {ROLE[who.role]} account <code title={who.accountId}>{short(who.accountId)}</code>
      </span>
    );
  }
  const { account, contact } = me.data;
  return (
    <span className="who" data-testid="identity">
      <span className="account" title={`Account ${account.id}`}>
        {account.name}
      </span>
      <span className="muted"> · {account.parentId ? 'child partner' : ROLE[who.role].toLowerCase()} · </span>
      <span title={`Contact ${contact.id}`} data-testid="identity-email">
        {contact.email}
      </span>
    </span>
  );
}

/**
 * A sign-in link of another contact opened while a session is open: nothing changes unless the person says so (a link
 * sent by someone else must not put the person, unaware, into that sender's account).
 */
export function SwitchAccount({
  current,
  link,
  onStay,
  onSwitch,
}: {
  current: Identity;
  link: CheckedLink;
  onStay: () => void;
  onSwitch: () => void;
}) {
  useEffect(() => {
    document.title = 'Switch account? · Integrator portal';
  }, []);
  return (
    <main className="narrow" id="main">
      <h1>Switch account?</h1>
      <div role="alertdialog" aria-labelledby="switch-question" aria-describedby="switch-detail" className="confirm">
        <p id="switch-question" data-testid="switch-question">
          You are signed in as {describeIdentity(current)}. Sign in as the account of this link instead?
        </p>
        <p id="switch-detail">
          The link you opened signs in as <strong>{describeIdentity(link.identity)}</strong>. Only switch if you asked
          for this link yourself: a link someone sent you would show you their account, and what you enter there is
          theirs.
        </p>
        <div className="buttons">
          <button type="button" onClick={onStay} autoFocus>
            Stay signed in as {current.role} account {current.accountName ?? short(current.accountId)}
          </button>
          <button type="button" className="secondary" onClick={onSwitch}>
            Sign in with the link
          </button>
        </div>
      </div>
    </main>
  );
}

/**
 * A sign-in link opened without a session, that this browser did not ask for (no "Send me a link" here for its
 * address): the person says whether to sign in as the link's account, so that a link someone sent cannot sign them in
 * to the sender's account unawares.
 */
export function ConfirmLink({
  link,
  onSignIn,
  onCancel,
}: {
  link: CheckedLink;
  onSignIn: () => void;
  onCancel: () => void;
}) {
  useEffect(() => {
    document.title = 'Sign in with this link? · Integrator portal';
  }, []);
  return (
    <main className="narrow" id="main">
      <h1>Sign in with this link?</h1>
      <div role="alertdialog" aria-labelledby="confirm-question" aria-describedby="confirm-detail" className="confirm">
        <p id="confirm-question" data-testid="confirm-question">
          This link signs in as <strong>{describeIdentity(link.identity)}</strong>.
        </p>
        <p id="confirm-detail">
          Only sign in if you asked for this link yourself: a link someone sent you would show you their account, and
          what you enter there is theirs.
        </p>
        <div className="buttons">
          <button type="button" onClick={onSignIn}>
            Sign in as {link.identity.accountName ?? describeIdentity(link.identity)}
          </button>
          <button type="button" className="secondary" onClick={onCancel} autoFocus>
            Cancel
          </button>
        </div>
      </div>
    </main>
  );
}
