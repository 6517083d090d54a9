// `npm run -s mail:last-token` and `npm run -s mail:last-link`: the refresh token, or the portal's sign-in link, of the
// newest mail holding one that the file mailer wrote into DATA_DIR/mail (local use without SMTP_URL). The .eml is
// quoted-printable (a `=` is `=3D`, long lines are cut with a `=` at their end): undone here, so that what is printed
// can be used as it is. Only DATA_DIR is read: a helper that reads mail does not judge the service's other settings.
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DEFAULT_DATA_DIR } from './config.ts';

const what = process.argv[2];
if (what !== 'token' && what !== 'link') {
  console.error('usage: tsx server/last-mail.ts token|link');
  process.exit(2);
}
const dir = join(resolve(process.env.DATA_DIR || DEFAULT_DATA_DIR), 'mail');
const mails = (await readdir(dir).catch(() => [] as string[]))
  .filter((f) => f.endsWith('.eml'))
  .sort()
  .reverse();
if (mails.length === 0) {
  console.error(`no mail in ${dir} yet: sign in on the portal, or POST /v3/auth/login, first`);
  process.exit(1);
}
/** The token or the link a mail holds, if any. */
async function foundIn(file: string): Promise<string | undefined> {
  const quotedPrintable = await readFile(join(dir, file), 'latin1');
  const text = Buffer.from(
    quotedPrintable
      .replace(/=[ \t]*\r?\n/g, '')
      .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
  const lines = text.split(/\r?\n/);
  return what === 'token'
    ? lines.find((line) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(line))
    : lines.map((line) => /https?:\/\/\S+#refresh=[\w.-]+/.exec(line)?.[0]).find(Boolean);
}
// The newest mail that holds one: an endpoint's failure mail may have come after the sign-in mail.
for (const file of mails) {
  const found = await foundIn(file);
  if (found) {
    console.log(found);
    process.exit(0);
  }
}
console.error(
  `no mail in ${dir} holds a ${what === 'token' ? 'refresh token' : 'sign-in link'}: sign in on the portal, or POST /v3/auth/login, first`,
);
process.exit(1);
