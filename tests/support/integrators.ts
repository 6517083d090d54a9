import * as assert from 'uvu/assert';
import type { BuildOverrides } from '../../server/compose.ts';
import { RecordingMailer } from '../fakes.ts';
import { testApp, uniqueEmail } from './app.ts';

type App = Awaited<ReturnType<typeof testApp>>;

/** An app whose mails are kept in memory, so that tests can read the refresh tokens sent. */
export async function appWithMailbox(env: Record<string, string> = {}, overrides: Omit<BuildOverrides, 'mailer'> = {}) {
  const mailbox = new RecordingMailer();
  const app = await testApp(env, { ...overrides, mailer: mailbox });
  return { ...app, mailbox };
}

/** The token line of the newest mail to that address. */
export function tokenMailedTo(mailbox: RecordingMailer, email: string): string {
  const mail = mailbox.sent.filter((m) => m.to.toLowerCase() === email.toLowerCase()).at(-1);
  assert.ok(mail, `no mail to ${email}`);
  const line = mail.text.split('\n').find((l) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(l));
  assert.ok(line, 'no token line in the mail');
  return line;
}

/** Creates an account with a contact and walks the whole login: answers its ids and both tokens. */
export async function integrator(
  app: App & { mailbox: RecordingMailer },
  role: 'brand' | 'partner',
  parentId?: string,
) {
  const accountId = (
    await app.admin.call<{ id: string }>('accounts.create', {
      name: `${role} account`,
      role,
      ...(parentId && { parentId }),
    })
  ).id;
  const email = uniqueEmail(role);
  const contactId = (await app.admin.call<{ id: string }>('contacts.create', { accountId, email })).id;
  const refreshToken = await refreshTokenFor(app, email);
  const res = await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${refreshToken}`).send({});
  assert.is(res.status, 200, JSON.stringify(res.body));
  return { accountId, contactId, email, refreshToken, accessToken: res.body.access_token as string };
}

export async function refreshTokenFor(app: App & { mailbox: RecordingMailer }, email: string) {
  const res = await app.http.post('/v3/auth/login').send({ email });
  assert.is(res.status, 200);
  await app.drainDeferred();
  return tokenMailedTo(app.mailbox, email);
}
