// `npm run -s mail:last-token`: the refresh token of the newest mail the file mailer wrote (local use
// without SMTP). The .eml is quoted-printable; undoing its soft line breaks gives the token's own line.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from './config.ts';

const dir = join(loadConfig().dataDir, 'mail');
const newest = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml')).sort().at(-1);
if (!newest) {
  console.error(`no mail in ${dir} yet: POST /v3/auth/login first`);
  process.exit(1);
}
const text = (await readFile(join(dir, newest), 'utf8')).replace(/=\r?\n/g, '');
const token = text.split(/\r?\n/).find((line) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(line));
if (!token) process.exit(1);
console.log(token);
