import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FileMailer } from '../../adapters/mail/file-mailer.ts';
import { refreshTokenMail } from '../../domain/auth.ts';
import { endpointNoticeMail } from '../../domain/endpoint-health.ts';

// npm run mail:last-token and mail:last-link read the newest mail the file mailer wrote: a quoted-printable .eml whose
// link reads `#refresh=3DeyJ…` cut over several lines as written. They print what can be used as it is, and read only
// DATA_DIR: another setting that the service would refuse (a short ADMIN_TOKEN) is none of their business.
const test = suite("the mail helpers: the newest mail's token and sign-in link, decoded");
const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-mail-helpers-'));
test.after(() => rmSync(dataDir, { recursive: true, force: true }));

const helper = (what: string) =>
  run(process.execPath, ['--import', 'tsx', 'server/last-mail.ts', what], {
    cwd: join(import.meta.dirname, '..', '..'),
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, ADMIN_TOKEN: 'short', PORT: 'not-a-port' },
  });

test('before any mail: exit 1 and a line saying where it looked; then the token and the link, whole and decoded', async () => {
  const none = await helper('link').then(
    () => null,
    (error: { code: number; stderr: string }) => error,
  );
  assert.equal(none?.code, 1);
  assert.match(none!.stderr, /no mail in .*mail yet/);
  assert.not.match(none!.stderr, /at .*\.ts:\d+/, 'no stack trace');

  const token = `eyJhbGciOiJIUzI1NiIsInR5cCI6InJ0K2p3dCJ9.${'eyJzdWIiOiJjb250YWN0In0'.repeat(6)}.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg`;
  const link = `http://localhost:3000/portal/#refresh=${token}`;
  await new FileMailer(join(dataDir, 'mail'), 'no-reply@localhost', () => {}).send(
    refreshTokenMail('a@example.com', token, new Date(), link),
  );
  assert.equal((await helper('token')).stdout, `${token}\n`);
  assert.equal((await helper('link')).stdout, `${link}\n`, 'one line, = not =3D');

  // An endpoint's failure mail after the sign-in mail (the demo's, or a real one): the sign-in mail's link still.
  await new Promise((resolve) => setTimeout(resolve, 5)); // the file names sort by the millisecond they were written
  await new FileMailer(join(dataDir, 'mail'), 'no-reply@localhost', () => {}).send(
    endpointNoticeMail(
      'a@example.com',
      {
        kind: 'failing',
        endpointId: 'e',
        accountId: 'a',
        url: 'https://hooks.example.com/in',
        failingSince: new Date(),
        failedDeliveries: 1,
      },
      'http://localhost:3000/portal/#/deliveries?status=failed',
    ),
  );
  assert.equal((await helper('link')).stdout, `${link}\n`, 'the newest mail holding a link');
  const usage = await helper('other').then(
    () => null,
    (error: { code: number }) => error,
  );
  assert.equal(usage?.code, 2);
});

test.run();
