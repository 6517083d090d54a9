import { useEffect, useState, type FormEvent } from 'react';
import { api, call } from './api/client';
import { signIn } from './api/session';
import { ProblemBox, useAction } from './ui';

export function SignIn({ message, onSignedIn }: { message: string; onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [token, setToken] = useState('');
  const [sent, setSent] = useState('');
  const login = useAction();
  useEffect(() => { document.title = 'Sign in · Integrator portal'; }, []);

  const requestMail = (e: FormEvent) => {
    e.preventDefault();
    void login.run(async () => {
      const answer = await call(api.POST('/v3/auth/login', { body: { email } }));
      setSent(answer.status);
    });
  };
  const useToken = (e: FormEvent) => {
    e.preventDefault();
    signIn(token);
    onSignedIn();
  };
  return (
    <main className="narrow" id="main">
      <h1>Sign in to the integrator portal</h1>
      {message && <div className="problem" role="alert"><p>{message}</p><p>Ask for a new sign-in link below.</p></div>}
      <p>We e-mail a sign-in link to contacts with API access. It is valid for 24 hours; closing this tab signs you out.</p>
      <form onSubmit={requestMail} aria-labelledby="mail-heading">
        <h2 id="mail-heading">Get a sign-in link</h2>
        <label htmlFor="email">E-mail address</label>
        <input id="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <button type="submit" disabled={login.busy}>Send me a link</button>
        {sent && <p role="status">{sent}</p>}
        {login.problem && <ProblemBox problem={login.problem} />}
      </form>
      <form onSubmit={useToken} aria-labelledby="token-heading">
        <h2 id="token-heading">Or paste the token from the mail</h2>
        <label htmlFor="token">Refresh token</label>
        <input id="token" type="password" autoComplete="off" required value={token} onChange={(e) => setToken(e.target.value)} />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
