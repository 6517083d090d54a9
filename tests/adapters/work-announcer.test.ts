import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { notifyWork, workAnnouncer } from '../../adapters/persistence/wake-ups/announcer.ts';
import { WORK_CHANNEL } from '../../adapters/persistence/wake-ups/notices.ts';
import type { BackgroundWork } from '../../domain/ports.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

const test = suite('work announcer');

/** A send whose every call the test ends by hand. */
function heldSends() {
  const calls: { kind: BackgroundWork; end(error?: Error): void }[] = [];
  const send = (kind: BackgroundWork) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ kind, end: (error) => (error ? reject(error) : resolve()) });
    });
  return { calls, send };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('while a send is under way, any number of announcements lead to exactly one more, sent after it', async () => {
  const { calls, send } = heldSends();
  const announcer = workAnnouncer(send, () => {});
  announcer.announce(new Set(['commands']));
  assert.is(calls.length, 1);
  for (let i = 0; i < 50; i++) announcer.announce(new Set(['commands']));
  await turn();
  assert.is(calls.length, 1, 'nothing more while the first is under way');
  calls[0]!.end();
  await turn();
  assert.equal(
    calls.map((c) => c.kind),
    ['commands', 'commands'],
    'one more, after the first ended',
  );
  calls[1]!.end();
  await announcer.settled();
  assert.is(calls.length, 2, 'and no third');
  announcer.announce(new Set(['commands']));
  assert.is(calls.length, 3, 'idle again: the next announcement is sent at once');
  calls[2]!.end();
  await announcer.settled();
});

test('with a spacing, the follow-up waits that long after the send before it ended; an idle kind is announced at once', async () => {
  const { calls, send } = heldSends();
  const announcer = workAnnouncer(send, () => {}, { spacingMs: 50 });
  announcer.announce(new Set(['commands']));
  announcer.announce(new Set(['commands']));
  const ended = performance.now();
  calls[0]!.end();
  await turn();
  assert.is(calls.length, 1, 'not at once');
  while (calls.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(performance.now() - ended >= 45, 'the spacing after the first ended');
  calls[1]!.end();
  await announcer.settled();
  assert.is(calls.length, 2, 'and no third');
  announcer.announce(new Set(['commands']));
  assert.is(calls.length, 3, 'idle again: sent at once');
  calls[2]!.end();
  await announcer.close();
});

test('closing waits for the sends under way and sends no follow-up', async () => {
  const { calls, send } = heldSends();
  const announcer = workAnnouncer(send, () => {});
  announcer.announce(new Set(['commands']));
  announcer.announce(new Set(['commands']));
  let closed = false;
  const closing = announcer.close().then(() => {
    closed = true;
  });
  await turn();
  assert.is(closed, false, 'the send under way is waited for');
  calls[0]!.end();
  await closing;
  assert.is(calls.length, 1, 'no follow-up once closing');
});

test('kinds are announced independently, and a failed send is reported and does not stop later ones', async () => {
  const { calls, send } = heldSends();
  const errors: unknown[] = [];
  const announcer = workAnnouncer(send, (error) => {
    errors.push(error);
    throw new Error('a reporter that fails');
  });
  announcer.announce(new Set(['commands', 'deliveries']));
  assert.equal(
    calls.map((c) => c.kind),
    ['commands', 'deliveries'],
  );
  calls[0]!.end(new Error('server away'));
  calls[1]!.end();
  await announcer.settled();
  assert.equal(
    errors.map((e) => (e as Error).message),
    ['server away'],
  );
  announcer.announce(new Set(['commands']));
  assert.is(calls.length, 3, 'after a failure the kind is idle again');
  calls[2]!.end();
  await announcer.settled();
});

test('PostgreSQL: a NOTIFY on the work channel, heard by a listener', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const database = await sharedDatabase();
  const listener = new pg.Client({ connectionString: database.url });
  const heard: string[] = [];
  listener.on('notification', (m) => heard.push(m.payload ?? ''));
  await listener.connect();
  try {
    await listener.query(`listen ${WORK_CHANNEL}`);
    await notifyWork(database.orm)('deliveries');
    for (const end = Date.now() + 2000; heard.length === 0 && Date.now() < end; )
      await new Promise((r) => setTimeout(r, 5));
    assert.equal(heard, ['deliveries']);
  } finally {
    await listener.end();
  }
});

test('PostgreSQL: the rate-limit counters and the stream slots are unlogged tables (their commits do not wait for the disk)', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const database = await sharedDatabase();
  const rows = await database.orm.em
    .getConnection()
    .execute<{ relname: string; relpersistence: string }[]>(
      "select relname, relpersistence from pg_class where relname in ('login_rate_limits', 'stream_slots', 'commands') order by relname",
    );
  assert.equal(
    rows.map((r) => `${r.relname}:${r.relpersistence}`),
    ['commands:p', 'login_rate_limits:u', 'stream_slots:u'],
  );
});

test.run();
