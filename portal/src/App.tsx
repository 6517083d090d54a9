import { QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { createHashRouter, RouterProvider } from 'react-router';
import {
  acceptLink,
  accessToken,
  type CheckedLink,
  checkPendingLink,
  declineLink,
  hasPendingLink,
  type Identity,
  onLinkOpened,
  onSignedOut,
  refreshToken,
  SignedOut,
  signOut,
} from './api/session';
import { ConfirmLink, describeIdentity, SwitchAccount } from './identity';
import { newQueryClient } from './query';
import { type Notice, portalRoutes } from './routes';
import { SignIn } from './SignIn';

type Session =
  | { state: 'out'; message: string }
  | { state: 'checking' }
  | { state: 'ask'; current: Identity; link: CheckedLink }
  | { state: 'confirm'; link: CheckedLink }
  | { state: 'in'; identity: Identity; notice?: Notice };

export function App() {
  const [session, setSession] = useState<Session>(() =>
    refreshToken() || hasPendingLink() ? { state: 'checking' } : { state: 'out', message: '' },
  );
  useEffect(() => onSignedOut((message) => setSession({ state: 'out', message })), []);
  // A sign-in link opened in a tab that already shows the portal changes only the fragment.
  useEffect(() => onLinkOpened(() => setSession({ state: 'checking' })), []);
  useEffect(() => {
    if (session.state !== 'checking') return;
    let current = true;
    settle().then(
      (next) => {
        if (current) setSession(next);
      },
      (error: unknown) => {
        if (current && !(error instanceof SignedOut))
          setSession({ state: 'out', message: 'The service could not be reached; try again.' });
      },
    );
    return () => {
      current = false;
    };
  }, [session]);

  if (session.state === 'out')
    return <SignIn message={session.message} onSignedIn={() => setSession({ state: 'checking' })} />;
  if (session.state === 'checking')
    return (
      <main className="narrow">
        <p role="status">Signing in…</p>
      </main>
    );
  if (session.state === 'ask') {
    return (
      <SwitchAccount
        current={session.current}
        link={session.link}
        onStay={() => {
          declineLink(session.link);
          setSession({ state: 'in', identity: session.current });
        }}
        onSwitch={() => {
          acceptLink(session.link);
          setSession({
            state: 'in',
            identity: session.link.identity,
            notice: { text: `Signed in as ${describeIdentity(session.link.identity)}.`, alert: false },
          });
        }}
      />
    );
  }
  if (session.state === 'confirm') {
    return (
      <ConfirmLink
        link={session.link}
        onSignIn={() => {
          acceptLink(session.link);
          setSession({ state: 'in', identity: session.link.identity });
        }}
        onCancel={() => {
          declineLink(session.link);
          signOut();
        }}
      />
    );
  }
  const { identity } = session;
  return <Portal key={`${identity.accountId}/${identity.contactId}`} who={identity} notice={session.notice} />;
}

/** The session as the address and the stored token leave it: signed in, or a link of someone else to confirm first. */
async function settle(): Promise<Session> {
  if (!hasPendingLink()) return { state: 'in', identity: (await accessToken()).identity };
  const check = await checkPendingLink();
  if (check.outcome === 'ask') return { state: 'ask', current: check.current, link: check.link };
  if (check.outcome === 'confirm') return { state: 'confirm', link: check.link };
  if (check.outcome === 'switched') {
    if (!check.sessionEnded) return { state: 'in', identity: check.identity };
    return {
      state: 'in',
      identity: check.identity,
      notice: {
        text: `Your earlier session had ended: you are signed in with the link you opened, as ${describeIdentity(check.identity)}.`,
        alert: false,
      },
    };
  }
  return {
    state: 'in',
    identity: check.current,
    notice: {
      text: `The sign-in link you opened was refused (${check.reason}). You are still signed in as ${describeIdentity(check.current)}.`,
      alert: true,
    },
  };
}

/** One client and one router per session: a session of another contact starts with nothing cached. */
function Portal({ who, notice }: { who: Identity; notice?: Notice }) {
  const [client] = useState(newQueryClient);
  const [router] = useState(() => createHashRouter(portalRoutes(who, notice)));
  useEffect(() => () => router.dispose(), [router]); // a session left (signed out, switched) stops listening to the address
  return (
    <QueryClientProvider client={client}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
