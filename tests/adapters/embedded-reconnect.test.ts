import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Database, openDatabase } from '../../adapters/persistence/database/open.ts';
import { mikroOrmAutocommit } from '../../adapters/persistence/unit-of-work.ts';

// The embedded database's one connection, lost in the middle of a readiness ping: the ping fails, and afterwards
// everything works again on a new connection, prepared statements included (the session left behind is cleaned).
const test = suite('the embedded database after a lost connection');
let database: Database;
const warnings: string[] = [];
test.before(async () => {
  database = await openDatabase({ pgliteDir: 'memory://', driverWarning: (message) => warnings.push(message) });
});
test.after(() => database.close());

type PooledClient = { connection: { stream: { destroy(): void } } };
const theConnection = () => {
  const pool = (
    database.orm.em.getKnex().client as unknown as {
      pool: { free: { resource: PooledClient }[]; used: { resource: PooledClient }[] };
    }
  ).pool;
  const held = [...pool.used, ...pool.free];
  assert.is(held.length, 1, 'one connection');
  return held[0]!.resource;
};

test("/readyz's ping fails while the connection is lost, then the service works again", async () => {
  const run = mikroOrmAutocommit(database.orm);
  assert.is(
    await run((r) => r.contacts.accessOf('00000000-0000-4000-8000-000000000000')),
    null,
    'a prepared statement on the first connection',
  );
  assert.is(await database.ping(), true);

  const pinging = database.ping();
  theConnection().connection.stream.destroy();
  assert.is(await pinging, false, 'the ping in flight failed');

  assert.is(await database.ping(), true, 'the next ping opens a new connection');
  assert.is(
    await run((r) => r.contacts.accessOf('00000000-0000-4000-8000-000000000000')),
    null,
    'the same prepared statement on the new one',
  );
  assert.is(await run((r) => r.jobs.get('nothing')), null);
  // The pool's word on the lost connection comes to the service's logger, not to stdout (it printed `Connection
  // Error`).
  assert.ok(
    warnings.some((w) => /^Connection Error: /.test(w)),
    JSON.stringify(warnings),
  );
});

test.run();
