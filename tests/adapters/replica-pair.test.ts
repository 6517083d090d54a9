import { connect } from 'node:net';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ReplicaSet } from '../../adapters/persistence/replicas/replica-set.ts';
import { skipUnless } from '../support/skip.ts';
import { replicaToolsMissing, sql, startReplicaPair, type TempReplicaPair } from '../support/temp-replica.ts';

// The fixture for tests of read replicas (tests/support/temp-replica.ts): a primary and a hot standby streaming from
// it, and the ways a test bends the standby (replay paused, stopped, frozen), each shown to do what it says.
const test = suite("a streaming replica made with PostgreSQL's own tools");
const missing = replicaToolsMissing();
let pair: TempReplicaPair | undefined;
process.once('exit', () => pair?.destroySync());
test.before(async () => {
  if (missing === null) pair = await startReplicaPair();
});
test.after(async () => {
  await pair?.destroy();
  pair = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const onPrimary = (text: string, values: unknown[] = []) => sql(pair!.primary.url('postgres'), text, values);
const onReplica = (text: string, values: unknown[] = []) => sql(pair!.replica.url('postgres'), text, values);
const idsOnReplica = async () =>
  (await onReplica('select id from notes order by id')).map((row) => (row as { id: number }).id);

/** 'answered', or why `select 1` on a new connection did not answer within `ms` (its error's message). */
async function probe(url: string, ms: number): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: ms, query_timeout: ms });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return 'answered';
  } catch (error) {
    return (error as Error).message;
  } finally {
    // A frozen server never acknowledges the goodbye: the connection is dropped, not closed politely.
    client.end().catch(() => {});
  }
}

/** Whether the kernel completes a TCP connection to `port` within 1 s. */
const tcpAccepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (accepted: boolean) => {
      socket.destroy();
      resolve(accepted);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });

test('a row written on the primary is on the replica once it caught up; the replica refuses writes', async () => {
  if (skipUnless(missing === null, missing ?? '')) return;
  await onPrimary('create table notes (id int primary key, body text not null)');
  await onPrimary(`insert into notes values (1, 'first')`);
  await pair!.caughtUp();
  assert.equal(await onReplica('select id, body from notes'), [{ id: 1, body: 'first' }]);
  const refusal = await onReplica(`insert into notes values (2, 'second')`).then(
    () => 'written',
    (error: { code?: string }) => error.code,
  );
  assert.is(refusal, '25006', 'a read-only transaction');
  assert.equal(await onReplica('select pg_is_in_recovery() as standby'), [{ standby: true }]);
  assert.match(await pair!.replica.log(), /started streaming WAL/);
});

test('with replay paused a new row stays off the replica; resumed, it arrives', async () => {
  if (skipUnless(missing === null, missing ?? '')) return;
  await pair!.pauseReplay();
  await onPrimary(`insert into notes values (2, 'while paused')`);
  const until = Date.now() + 500;
  while (Date.now() < until) {
    assert.equal(await idsOnReplica(), [1], 'replayed while paused');
    await sleep(50);
  }
  await pair!.resumeReplay();
  await pair!.caughtUp();
  assert.equal(await idsOnReplica(), [1, 2]);
});

test('stopped and started again, the replica streams again', async () => {
  if (skipUnless(missing === null, missing ?? '')) return;
  await pair!.replica.stop();
  const whileStopped = await onReplica('select 1').then(
    () => 'answered',
    (error: { code?: string }) => error.code,
  );
  assert.is(whileStopped, 'ECONNREFUSED');
  await onPrimary(`insert into notes values (3, 'while stopped')`);
  await pair!.replica.start();
  await pair!.caughtUp();
  await onPrimary(`insert into notes values (4, 'after the start')`);
  await pair!.caughtUp();
  assert.equal(await idsOnReplica(), [1, 2, 3, 4]);
  assert.equal(await onReplica('select status from pg_stat_wal_receiver'), [{ status: 'streaming' }]);
});

test('a frozen replica takes TCP connections but never answers; thawed, it answers again', async () => {
  if (skipUnless(missing === null, missing ?? '')) return;
  const { port } = pair!.replica;
  const url = pair!.replica.url('postgres');
  const held = new pg.Client({ connectionString: url, query_timeout: 1000 });
  held.on('error', () => {});
  await held.connect();
  try {
    await pair!.replica.freeze();
    const started = Date.now();
    const [fresh, pooled, accepted] = await Promise.all([
      probe(url, 1000),
      held.query('select 1').then(
        () => 'answered',
        (error: Error) => error.message,
      ),
      tcpAccepts(port),
    ]);
    const waited = Date.now() - started;
    assert.ok(accepted, 'the kernel completes the TCP connection');
    assert.match(fresh, /timeout/i);
    assert.match(pooled, /timeout/i);
    assert.ok(waited >= 900 && waited < 3000, `gave up after ${waited} ms`);
    // Frozen, and still frozen: the primary goes on.
    assert.match(await probe(url, 300), /timeout/i);
    await onPrimary(`insert into notes values (5, 'while frozen')`);
    await pair!.replica.thaw();
    assert.is(await probe(url, 5000), 'answered');
    assert.equal((await held.query('select 2 as two')).rows, [{ two: 2 }]);
    await pair!.caughtUp();
    assert.equal(await idsOnReplica(), [1, 2, 3, 4, 5]);
  } finally {
    await pair!.replica.thaw();
    await held.end();
  }
});

// CI once ended its whole run here: the server's goodbye (57P01) reached a connection a read held between two of its
// statements, which a pool does not listen on while it is lent, and the unheard 'error' event ended the process.
test('a replica connection ended while a read holds it: the read goes to the primary, the process lives', async () => {
  if (skipUnless(missing === null, missing ?? '')) return;
  const replicas = new ReplicaSet(pair!.primary.url('postgres'), [pair!.replica.url('postgres')], {
    maxLagMs: 60_000,
    poolSize: 1,
  });
  replicas.start();
  try {
    for (const deadline = Date.now() + 10_000; !replicas.views()[0]!.usable; await sleep(50))
      assert.ok(Date.now() < deadline, 'the replica usable within 10 s');
    const answer = await replicas.session().read(
      async (client) => {
        const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
        await onReplica('select pg_terminate_backend($1)', [rows[0]!.pid]);
        await sleep(300); // the goodbye arrives while no statement runs
        return (await client.query<{ at: string }>("select 'replica' as at")).rows[0]!.at;
      },
      async () => 'primary',
    );
    assert.is(answer, 'primary');
  } finally {
    await replicas.close();
  }
});

test.run();
