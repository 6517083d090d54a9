import { useEffect, useState } from 'react';
import {
  acceptLink, accessToken, checkPendingLink, declineLink, hasPendingLink, onSignedOut, refreshToken, signOut, SignedOut,
  takeTokenFromAddress, type Exchanged, type Identity, type Role,
} from './api/session';
import { describeIdentity, SwitchAccount, Who } from './identity';
import { Commands } from './pages/Commands';
import { Deliveries } from './pages/Deliveries';
import { DeliveryDetail } from './pages/Delivery';
import { Endpoint } from './pages/Endpoint';
import { Events } from './pages/Events';
import { OrderDetail, Orders } from './pages/Orders';
import { SignIn } from './SignIn';

/** The route is the address's fragment: `#/deliveries/<id>`. */
function useRoute(): string[] {
  // A sign-in link's fragment is no route (the token leaves the address at once): it must not stay in a route either.
  const read = () => (/^#refresh=/.test(window.location.hash) ? []
    : window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent));
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const listener = () => setRoute(read());
    window.addEventListener('hashchange', listener);
    return () => window.removeEventListener('hashchange', listener);
  }, []);
  return route;
}

type Session =
  | { state: 'out'; message: string }
  | { state: 'checking' }
  | { state: 'ask'; current: Identity; link: Exchanged }
  | { state: 'in'; identity: Identity; notice?: { text: string; alert: boolean } };

export function App() {
  const [session, setSession] = useState<Session>(() => (refreshToken() ? { state: 'checking' } : { state: 'out', message: '' }));
  useEffect(() => onSignedOut((message) => setSession({ state: 'out', message })), []);
  // A sign-in link opened in a tab that already shows the portal changes only the fragment.
  useEffect(() => {
    const listener = () => { if (takeTokenFromAddress() !== 'none') setSession({ state: 'checking' }); };
    window.addEventListener('hashchange', listener);
    return () => window.removeEventListener('hashchange', listener);
  }, []);
  useEffect(() => {
    if (session.state !== 'checking') return;
    let current = true;
    settle().then(
      (next) => { if (current) setSession(next); },
      (error: unknown) => {
        if (current && !(error instanceof SignedOut)) setSession({ state: 'out', message: 'The service could not be reached; try again.' });
      },
    );
    return () => { current = false; };
  }, [session]);

  if (session.state === 'out') return <SignIn message={session.message} onSignedIn={() => setSession({ state: 'checking' })} />;
  if (session.state === 'checking') return <main className="narrow"><p role="status">Signing in…</p></main>;
  if (session.state === 'ask') {
    return (
      <SwitchAccount current={session.current} link={session.link}
        onStay={() => { declineLink(); setSession({ state: 'in', identity: session.current }); }}
        onSwitch={() => {
          acceptLink(session.link);
          setSession({ state: 'in', identity: session.link.identity, notice: { text: `Signed in as ${describeIdentity(session.link.identity)}.`, alert: false } });
        }} />
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
  if (check.outcome === 'switched') return { state: 'in', identity: check.identity };
  return {
    state: 'in', identity: check.current,
    notice: { text: `The sign-in link you opened was refused (${check.reason}). You are still signed in as ${describeIdentity(check.current)}.`, alert: true },
  };
}

const PAGES: { path: string; label: string; roles: Role[] }[] = [
  { path: 'endpoint', label: 'Endpoint', roles: ['partner', 'brand'] },
  { path: 'deliveries', label: 'Deliveries', roles: ['partner', 'brand'] },
  { path: 'events', label: 'Events', roles: ['partner', 'brand'] },
  { path: 'orders', label: 'Orders', roles: ['partner'] },
  { path: 'commands', label: 'Commands', roles: ['brand'] },
];

function Portal({ who, notice }: { who: Identity; notice?: { text: string; alert: boolean } }) {
  const { role } = who;
  const [page = 'endpoint', id] = useRoute();
  const pages = PAGES.filter((p) => p.roles.includes(role));
  const current = pages.find((p) => p.path === page) ?? pages[0]!;
  useEffect(() => { document.title = `${current.label} · Integrator portal`; }, [current.label]);
  return (
    <>
      <a className="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
      <header className="bar">
        <span className="brand">Integrator portal</span>
        <Who who={who} />
        <nav aria-label="Pages">
          <ul>
            {pages.map((p) => (
              <li key={p.path}><a href={`#/${p.path}`} aria-current={p.path === current.path ? 'page' : undefined}>{p.label}</a></li>
            ))}
          </ul>
        </nav>
        <button type="button" className="secondary" onClick={() => { window.location.hash = ''; signOut(''); }}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        {notice && <p className={notice.alert ? 'problem' : 'notice'} role={notice.alert ? 'alert' : 'status'}>{notice.text}</p>}
        {current.path === 'endpoint' && <Endpoint />}
        {current.path === 'deliveries' && (id ? <DeliveryDetail id={id} role={role} /> : <Deliveries role={role} />)}
        {current.path === 'events' && <Events key={id ?? ''} after={id} role={role} />}
        {current.path === 'orders' && (id ? <OrderDetail id={id} /> : <Orders />)}
        {current.path === 'commands' && <Commands initial={id ?? ''} />}
      </main>
    </>
  );
}
