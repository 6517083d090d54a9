// `npm run -s mail:last-token` and `npm run -s mail:last-link`: the refresh token, or the portal's sign-in link, of the
// newest mail the file mailer wrote into DATA_DIR/mail (local use without SMTP_URL). The .eml is quoted-printable
// (a `=` is `=3D`, long lines are cut with a `=` at their end): undone here, so that what is printed can be used as it is.
// Only DATA_DIR is read: a helper that reads mail does not judge the service's other settings.
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DEFAULT_DATA_DIR } from './config.ts';

const what = process.argv[2];
if (what !== 'token' && what !== 'link') {
  console.error('usage: tsx server/last-mail.ts token|link');
  process.exit(2);
}
const dir = join(resolve(process.env.DATA_DIR || DEFAULT_DATA_DIR), 'mail');
const newest = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml')).sort().at(-1);
if (!newest) {
  console.error(`no mail in ${dir} yet: sign in on the portal, or POST /v3/auth/login, first`);
  process.exit(1);
}
const quotedPrintable = await readFile(join(dir, newest), 'latin1');
const text = Buffer.from(quotedPrintable.replace(/=[ \t]*\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1')
  .toString('utf8');
const lines = text.split(/\r?\n/);
const found = what === 'token'
  ? lines.find((line) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(line))
  : lines.map((line) => /https?:\/\/\S+#refresh=[\w.-]+/.exec(line)?.[0]).find(Boolean);
if (!found) {
  console.error(`the newest mail (${join(dir, newest)}) holds no ${what === 'token' ? 'refresh token' : 'sign-in link'}`);
  process.exit(1);
}
console.log(found);
