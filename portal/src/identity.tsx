import { useEffect } from 'react';
import type { Exchanged, Identity } from './api/session';

// Who is signed in. The service's tokens carry the role, the account's id and the contact's id, and no answer of the API
// gives the account's name or the contact's e-mail yet: the ids are what can be shown (their first 8 characters, the
// whole in the tooltip), until the API answers the caller's names.
const short = (id: string) => id.slice(0, 8);
const ROLE = { partner: 'Partner', brand: 'Brand' } as const;

/** "partner account 3f2a9c1d, contact 5e6f7a8b": the words used wherever an identity is written out. */
export const describeIdentity = (who: Identity) => `${who.role} account ${short(who.accountId)}, contact ${short(who.contactId)}`;

/** The header's account line. */
export function Who({ who }: { who: Identity }) {
  return (
    <span className="who" data-testid="identity">
      {ROLE[who.role]} account <code title={who.accountId}>{short(who.accountId)}</code>
      <span className="muted">, contact <code title={who.contactId}>{short(who.contactId)}</code></span>
    </span>
  );
}

/**
 * A sign-in link of another contact opened while a session is open: nothing changes unless the person says so (a link
 * sent by someone else must not put the person, unaware, into that sender's account).
 */
export function SwitchAccount({ current, link, onStay, onSwitch }: {
  current: Identity; link: Exchanged; onStay: () => void; onSwitch: () => void;
}) {
  useEffect(() => { document.title = 'Switch account? · Integrator portal'; }, []);
  return (
    <main className="narrow" id="main">
      <h1>Switch account?</h1>
      <div role="alertdialog" aria-labelledby="switch-question" aria-describedby="switch-detail" className="confirm">
        <p id="switch-question" data-testid="switch-question">
          You are signed in as {describeIdentity(current)}. Sign in as the account of this link instead?
        </p>
        <p id="switch-detail">
          The link you opened signs in as <strong>{describeIdentity(link.identity)}</strong>. Only switch if you asked
          for this link yourself: a link someone sent you would show you their account, and what you enter there is theirs.
        </p>
        <div className="buttons">
          <button type="button" onClick={onStay} autoFocus>Stay signed in as {ROLE[current.role].toLowerCase()} account {short(current.accountId)}</button>
          <button type="button" className="secondary" onClick={onSwitch}>Sign in with the link</button>
        </div>
      </div>
    </main>
  );
}
