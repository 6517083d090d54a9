import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { api, call } from './api/client';
import { signIn } from './api/session';
import { rememberLinkAskedFor, rememberPageForSignIn } from './api/sign-in-memory';
import { MutationProblem } from './ui';

/**
 * Where this service's mail goes, as its page says (`<meta name="mail-delivery">`): `file` when no SMTP server is set,
 * so that a person trying the service locally learns where the link is instead of waiting for a mail that never comes.
 */
const mailDelivery = () => document.querySelector<HTMLMetaElement>('meta[name="mail-delivery"]')?.content ?? 'smtp';

export function SignIn({ message, onSignedIn }: { message: string; onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [token, setToken] = useState('');
  const login = useMutation({ mutationFn: (to: string) => call(api.POST('/v3/auth/login', { body: { email: to } })) });
  useEffect(() => {
    document.title = 'Sign in · Integrator portal';
    rememberPageForSignIn(window.location.hash);
  }, []);

  const requestMail = (e: FormEvent) => {
    e.preventDefault();
    rememberLinkAskedFor(email);
    login.mutate(email);
  };
  const useToken = (e: FormEvent) => {
    e.preventDefault();
    signIn(token);
    onSignedIn();
  };
  return (
    <main className="narrow" id="main">
      <h1>Sign in to the integrator portal</h1>
      {message && (
        <div className="problem" role="alert">
          <p>{message}</p>
          <p>Ask for a new sign-in link below.</p>
        </div>
      )}
      <p>
        We e-mail a sign-in link to contacts with API access. It is valid for 24 hours; closing this tab signs you out.
      </p>
      <form onSubmit={requestMail} aria-labelledby="mail-heading">
        <h2 id="mail-heading">Get a sign-in link</h2>
        <label htmlFor="email">E-mail address</label>
        <input
          id="email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <button type="submit" disabled={login.isPending}>
          Send me a link
        </button>
        {login.data && (
          <div role="status">
            <p>{login.data.status}</p>
            {mailDelivery() === 'file' && (
              <p className="muted" data-testid="local-mail">
                This service has no mail server set (SMTP_URL): it writes its mail to files under its data folder (
                <code>.data/mail/</code>). Where it runs, <code>npm run mail:last-link</code> prints your sign-in link.
              </p>
            )}
          </div>
        )}
        <MutationProblem mutation={login} />
      </form>
      <form onSubmit={useToken} aria-labelledby="token-heading">
        <h2 id="token-heading">Or paste the token from the mail</h2>
        <label htmlFor="token">Refresh token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
        />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
