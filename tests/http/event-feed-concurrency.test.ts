import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { closeAtEnd } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// The feed under concurrent writers, on the PostgreSQL server of CI's second pass (the embedded database has one
// connection: its writers cannot overlap). Writers insert events on connections of their own and hold their
// transactions open for random times, so that events commit out of their insertion (seq) order.
const test = suite('event feed: gap-free under concurrent writers');
const server = process.env.DATABASE_URL;
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
let app: App;
let pool: pg.Pool;
let reader: Awaited<ReturnType<typeof integrator>>;
let endpointId: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** An event as the outbox stores one (a CommandResultEvent: small, and valid against the API document). */
const eventRow = (accountId: string, cid: string) => {
  const id = randomUUID();
  return [
    id,
    accountId,
    JSON.stringify({
      _eid: id,
      _type: 'CommandResultEvent',
      _v: '1.3.0',
      _cid: cid,
      commandType: 'RefreshOrder',
      _metadata: {},
      result: { orderId: cid },
    }),
  ];
};
const INSERT = `insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
  values ($1, $2, 'brand', 'CommandResultEvent', null, $3::json, $4, now()) returning seq`;

/** Reads the feed as an integrator does: GET /v3/events, following `next`. */
function feedReader() {
  let after: string | null = null;
  const seen: string[] = [];
  return {
    seen,
    async poll() {
      const res = await app.http
        .get(`/v3/events?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`)
        .set('authorization', `Bearer ${reader.accessToken}`);
      assert.is(res.status, 200, JSON.stringify(res.body));
      seen.push(...res.body.items.map((e: Json) => e._cid as string));
      after = res.body.next ?? after;
      return res.body.items.length;
    },
  };
}

/** What the feed must not be: paging by the identity column, `seq > cursor`. */
function seqReader() {
  let after = 0;
  const seen: string[] = [];
  return {
    seen,
    async poll() {
      const { rows } = await pool.query<{ seq: string; cid: string }>(
        `select seq, payload->>'_cid' as cid from events where endpoint_id = $1 and seq > $2 order by seq limit 100`,
        [endpointId, after],
      );
      seen.push(...rows.map((r) => r.cid));
      if (rows.length > 0) after = Number(rows.at(-1)!.seq);
      return rows.length;
    },
  };
}

test.before(async () => {
  if (!onPostgres) return; // the tests skip themselves
  app = await appWithMailbox();
  pool = new pg.Pool({ connectionString: server, max: 12 });
  closeAtEnd(() => pool.end());
  reader = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: reader.accountId,
    scope: 'brand',
    url: null,
    transformer: 'default',
    version: '1.3.0',
  });
  endpointId = (
    await pool.query<{ id: string }>(`select id from webhook_configs where account_id = $1 and scope = 'brand'`, [
      reader.accountId,
    ])
  ).rows[0]!.id;
});

test('an event that commits after a later one: the seq reader skips it for good, the feed serves both', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const feed = feedReader();
  const naive = seqReader();
  await feed.poll();
  await naive.poll();
  const slow = await pool.connect();
  try {
    await slow.query('begin');
    const [id, account, payload] = eventRow(reader.accountId, 'slow');
    await slow.query(INSERT, [id, account, payload, endpointId]);
    const [id2, account2, payload2] = eventRow(reader.accountId, 'fast');
    await pool.query(INSERT, [id2, account2, payload2, endpointId]); // a later seq, committed at once
    await feed.poll();
    await naive.poll();
    assert.equal(naive.seen, ['fast']);
    assert.equal(feed.seen, ['fast']);
    await slow.query('commit');
  } finally {
    slow.release();
  }
  while ((await feed.poll()) > 0);
  while ((await naive.poll()) > 0);
  assert.equal(feed.seen, ['fast', 'slow'], 'the feed serves the late commit after the event it followed');
  assert.equal(naive.seen, ['fast'], 'the seq reader has passed the late event for good');
});

test('8 writers with random delays in their transactions, a reader in a tight loop: every committed event exactly once', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const feed = feedReader();
  const naive = seqReader();
  while ((await feed.poll()) > 0);
  while ((await naive.poll()) > 0);
  feed.seen.length = 0;
  naive.seen.length = 0;

  const committed: string[] = [];
  const rolledBack: string[] = [];
  let writing = true;
  const writer = async (w: number) => {
    for (let t = 0; t < 30; t++) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const cids = Array.from({ length: 1 + (t % 3) }, (_, k) => `w${w}-t${t}-e${k}`);
        for (const cid of cids) {
          const [id, account, payload] = eventRow(reader.accountId, cid);
          await client.query(INSERT, [id, account, payload, endpointId]);
          await sleep(Math.random() * 4);
        }
        // Writer 0 holds some transactions open far longer, while the others commit later events.
        await sleep(w === 0 && t % 5 === 0 ? 150 : Math.random() * 15);
        if (t % 7 === 6) {
          await client.query('rollback');
          rolledBack.push(...cids);
        } else {
          await client.query('commit');
          committed.push(...cids);
        }
      } finally {
        client.release();
      }
    }
  };
  const writers = Promise.all(Array.from({ length: 8 }, (_, w) => writer(w))).finally(() => {
    writing = false;
  });
  while (writing) {
    await feed.poll();
    await naive.poll();
  }
  await writers;
  while ((await feed.poll()) > 0);
  while ((await naive.poll()) > 0);

  assert.is(new Set(feed.seen).size, feed.seen.length, 'nothing twice');
  assert.equal([...feed.seen].sort(), [...committed].sort(), 'every committed event, none rolled back');
  assert.ok(rolledBack.length > 0 && rolledBack.every((cid) => !feed.seen.includes(cid)));
  // Each writer's events in the order it committed them.
  for (let w = 0; w < 8; w++) {
    const mine = (cids: string[]) => cids.filter((cid) => cid.startsWith(`w${w}-`));
    assert.equal(mine(feed.seen), mine(committed), `writer ${w}'s events in its commit order`);
  }
  const missed = committed.filter((cid) => !naive.seen.includes(cid));
  assert.ok(missed.length > 0, 'the same run read by seq > cursor loses events');
});

test.run();
