import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FileMailer } from '../../adapters/mail/file-mailer.ts';
import { RetryingMailer } from '../../adapters/mail/retrying-mailer.ts';
import { SmtpMailer } from '../../adapters/mail/smtp-mailer.ts';
import { refreshTokenMail } from '../../domain/auth.ts';
import type { Mailer } from '../../domain/ports.ts';

const test = suite('mailers');
const TOKEN = `eyJhbGciOiJIUzI1NiJ9.${'eyJzdWIiOiJ4In0'.repeat(20)}.c2lnbmF0dXJl`;
const message = refreshTokenMail(
  'ops@partner.example',
  TOKEN,
  new Date('2026-11-23T12:00:00Z'),
  `http://localhost:3000/portal/#refresh=${TOKEN}`,
);
/** Undoes quoted-printable soft breaks: what a mail client shows. */
const decoded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
const lines = (raw: string) => decoded(raw).split(/\r?\n/);

test('SMTP: a real server on loopback receives the mail, the token alone on a line', async () => {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => {
        raw += chunk.toString();
      });
      stream.on('end', () => {
        received.push(raw);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const mailer = new SmtpMailer(`smtp://127.0.0.1:${port}`, 'no-reply@api.example');
  try {
    await mailer.send(message);
  } finally {
    mailer.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  assert.is(received.length, 1);
  assert.match(received[0]!, /^To: ops@partner\.example/m);
  assert.match(received[0]!, /^From: no-reply@api\.example/m);
  assert.ok(lines(received[0]!).includes(TOKEN));
});

test('file mailer: one .eml per message; only its path is reported', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pbi-mail-'));
  const reported: string[] = [];
  try {
    await new FileMailer(dir, 'no-reply@localhost', (path) => reported.push(path)).send(message);
    const files = readdirSync(dir);
    assert.is(files.length, 1);
    assert.equal(reported, [join(dir, files[0]!)]);
    const raw = readFileSync(reported[0]!, 'utf8');
    assert.ok(lines(raw).includes(TOKEN));
    assert.match(raw, /^Subject: Your API refresh token/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('retrying mailer: failures are retried and reported; the last one is thrown', async () => {
  let calls = 0;
  const flaky: Mailer = {
    send: async () => {
      if (++calls < 3) throw new Error('421 try later');
    },
  };
  const attempts: number[] = [];
  await new RetryingMailer(flaky, (_e, n) => attempts.push(n), 4, 1).send(message);
  assert.is(calls, 3);
  assert.equal(attempts, [1, 2]);

  const down: Mailer = {
    send: async () => {
      throw new Error('connection refused');
    },
  };
  const failure = await new RetryingMailer(down, () => {}, 2, 1).send(message).catch((e: Error) => e);
  assert.instance(failure, Error);
  assert.match((failure as Error).message, 'connection refused');
});

test.run();
