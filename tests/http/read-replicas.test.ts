import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Database, openDatabase } from '../../adapters/persistence/database/open.ts';
import { ADMIN_TOKEN } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { skipUnless } from '../support/skip.ts';
import { replicaToolsMissing, sql, startReplicaPair, type TempReplicaPair } from '../support/temp-replica.ts';

// CONTRACT §12 on a real streaming replica (tests/support/temp-replica.ts): the listings, the poll, the feed and the
// delivery log read from a replica within REPLICA_MAX_LAG_MS, and from the primary when it lags, stops or hangs.
const test = suite('read replicas (CONTRACT §12)');
const missing = replicaToolsMissing();

let pair: TempReplicaPair;
let database: Database;
type App = Awaited<ReturnType<typeof appWithMailbox>>;
/** Reads the replica within 10 minutes (it is never left for lag here), and within 1.5 s. */
let loose: App;
let tight: App;
let brandToken: string;
let brandAccountId: string;

const replicaName = () => `127.0.0.1:${pair.replica.port}/pbi`;
async function served(app: App): Promise<{ primary: number; replica: number }> {
  const text = (await app.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`)).text;
  const count = (database: string) =>
    Number(new RegExp(`^db_reads_total\\{database="${database}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { primary: count('primary'), replica: count(replicaName()) };
}
async function until(what: string, probe: () => Promise<boolean>, ms = 10_000) {
  for (const deadline = Date.now() + ms; !(await probe()); ) {
    assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const feed = async (app: App, after?: string, limit = 100) => {
  const res = await app.http
    .get(`/v3/events?limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`)
    .set('authorization', `Bearer ${brandToken}`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body as { items: { _eid: string }[]; next: string | null };
};
const replicaUp = async (app: App) =>
  (await app.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`)).text.includes(
    `db_replica_up{replica="${replicaName()}"} 1`,
  );

test.before(async () => {
  if (missing) return;
  pair = await startReplicaPair({ fsync: 'off' });
  process.once('exit', () => pair?.destroySync());
  database = await openDatabase({ url: pair.primary.url('pbi'), pgliteDir: 'memory://', poolSize: 5 });
  const env = (lag: string) => ({
    DATABASE_URL: pair.primary.url('pbi'),
    DATABASE_REPLICA_URL: pair.replica.url('pbi'),
    REPLICA_MAX_LAG_MS: lag,
  });
  loose = await appWithMailbox(env('600000'), { database });
  tight = await appWithMailbox(env('1500'), { database });
  const brand = await integrator(loose, 'brand');
  brandToken = brand.accessToken;
  brandAccountId = brand.accountId;
  await loose.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    transformer: 'default',
    version: '1.3.0',
  });
  for (let i = 0; i < 3; i++) await loose.admin.call('jobs.create', { brandAccountId: brand.accountId });
  // Their feed positions, given on the primary (no worker runs here), replayed before anything reads the replica: a
  // feed read positions what it finds on the primary, which a replica has a moment later.
  await sql(pair.primary.url('pbi'), 'select sequence_round(1000)');
  await pair.caughtUp();
  await until('both apps reading the replica', async () => (await replicaUp(loose)) && (await replicaUp(tight)));
});

test.after(async () => {
  await loose?.close();
  await tight?.close();
  await database?.close();
  await pair?.destroy();
});

test('the feed and the poll are read from the replica: a write it has not replayed is seen only past it', async () => {
  if (skipUnless(!missing, missing ?? '')) return;
  const before = await feed(loose);
  assert.ok(before.items.length >= 3);
  const counted = await served(loose);
  await pair.pauseReplay();
  try {
    const { apiId } = await loose.admin.call<{ apiId: string }>('jobs.create', { brandAccountId });
    const poll = (app: App) => app.http.get(`/v3/poll/job/*/${apiId}`).set('authorization', `Bearer ${brandToken}`);
    // The loose app keeps reading the paused replica; the tight one leaves it within 2 s and reads the primary.
    assert.is((await feed(loose)).items.length, before.items.length, 'the replica has not replayed it');
    assert.is((await poll(loose)).status, 404, 'the single-order poll too');
    const after = await served(loose);
    assert.ok(after.replica > counted.replica, 'the replica answered');
    assert.is(after.primary, counted.primary, 'the primary did not');
    const left = Date.now();
    await until(
      'the lagging replica left, the write seen',
      async () => (await feed(tight)).items.length > before.items.length,
    );
    assert.ok(Date.now() - left < 2500, `left after ${Date.now() - left} ms`);
    assert.is((await poll(tight)).status, 200);
  } finally {
    await pair.resumeReplay();
  }
  await pair.caughtUp();
  await until('the tight app back on the replica once it caught up', () => replicaUp(tight));
});

test('a replica stopped, then started: every read answered (by the primary meanwhile), then read there', async () => {
  if (skipUnless(!missing, missing ?? '')) return;
  const before = await served(tight);
  await pair.replica.stop();
  try {
    for (let i = 0; i < 5; i++) assert.ok((await feed(tight)).items.length >= 3);
    assert.ok((await served(tight)).primary >= before.primary + 5, 'the primary answered them');
  } finally {
    await pair.replica.start();
  }
  await pair.caughtUp();
  await until('read on the replica again', () => replicaUp(tight));
  const back = await served(tight);
  await feed(tight);
  assert.ok((await served(tight)).replica > back.replica);
});

test('a replica that hangs: the read is answered by the primary within 2 s, with no 5xx', async () => {
  if (skipUnless(!missing, missing ?? '')) return;
  await until('on the replica', () => replicaUp(tight));
  await pair.replica.freeze();
  try {
    const asked = Date.now();
    assert.ok((await feed(tight)).items.length >= 3);
    assert.ok(Date.now() - asked < 2000, `answered after ${Date.now() - asked} ms`);
  } finally {
    await pair.replica.thaw();
  }
});

test('the feed stays gap-free across switches between the replica and the primary', async () => {
  if (skipUnless(!missing, missing ?? '')) return;
  const seen: string[] = [];
  let after: string | undefined;
  for (let round = 0; round < 6; round++) {
    if (round % 2 === 0) await pair.pauseReplay();
    else await pair.resumeReplay();
    for (let i = 0; i < 3; i++) await tight.admin.call('jobs.create', { brandAccountId });
    for (let page = 0; page < 4; page++) {
      const read = await feed(tight, after, 2);
      seen.push(...read.items.map((e) => e._eid));
      after = read.next ?? after;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
  await pair.resumeReplay();
  await pair.caughtUp();
  for (;;) {
    const read = await feed(tight, after, 100);
    if (read.items.length === 0) break;
    seen.push(...read.items.map((e) => e._eid));
    after = read.next ?? after;
  }
  await sql(pair.primary.url('pbi'), 'select sequence_round(1000)');
  await pair.caughtUp();
  const all = (await feed(loose, undefined, 500)).items.map((e) => e._eid);
  assert.equal(seen, all, 'every event once, in feed order');
});

test.run();
