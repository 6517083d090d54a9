import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact, unitsOfWork } from '../../adapters/persistence/unit-of-work.ts';
import { Account } from '../../domain/account.ts';
import { Contact } from '../../domain/contact.ts';
import { DomainError } from '../../domain/errors.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { job as sampleJob } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

const test = suite('MikroORM unit of work');
const now = new Date('2026-01-01T00:00:00.000Z');
const brand = () => new Account({ id: randomUUID(), name: 'b', role: 'brand', parentId: null, createdAt: now });

test('a change and its events commit together, or neither does', async () => {
  const transact = mikroOrmTransact((await sharedDatabase()).orm);
  const account = brand();
  const event = new OutboxEvent({
    id: randomUUID(),
    accountId: account.id,
    scope: 'brand',
    type: 'OrderStatusEvent',
    orderId: null,
    payload: {},
    endpointId: null,
    deliver: false,
    createdAt: now,
  });
  const failure = new Error('the use case failed half-way');
  const error = await transact(async (r) => {
    await r.accounts.save(account);
    await r.events.add([event]);
    throw failure;
  }).then(
    () => assert.unreachable("the unit of work swallowed its work's error"),
    (e: unknown) => e,
  );
  assert.is(error, failure, "the work's own error reaches the caller, neither wrapped nor translated");
  assert.is(await transact((r) => r.accounts.get(account.id)), null);
  assert.equal(await transact((r) => r.events.recentFor(account.id, 10)), []);
});

test('a transaction the server rolls back to break a deadlock is UNAVAILABLE (send it again), not a fault', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return; // the embedded database runs one transaction at a time
  const transact = mikroOrmTransact((await sharedDatabase()).orm);
  const owner = brand();
  const [a, b] = [sampleJob(owner.id), sampleJob(owner.id)];
  await transact(async (r) => {
    await r.accounts.save(owner);
    await r.jobs.save(a);
    await r.jobs.save(b);
  });
  // Each takes one row, and once both hold theirs, the other's.
  let taken = 0;
  let bothTaken!: () => void;
  const both = new Promise<void>((resolve) => {
    bothTaken = resolve;
  });
  const lockInTurn = (first: string, second: string) =>
    transact(async (r) => {
      await r.jobs.getForChange(first);
      if (++taken === 2) bothTaken();
      await both;
      await r.jobs.getForChange(second);
    });
  const outcomes = await Promise.allSettled([lockInTurn(a.apiId, b.apiId), lockInTurn(b.apiId, a.apiId)]);
  const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  assert.is(failed.length, 1, `the server ended one of the two: ${failed.map((f) => String(f.reason)).join('; ')}`);
  assert.instance(failed[0]!.reason, DomainError);
  assert.is((failed[0]!.reason as DomainError).code, 'UNAVAILABLE');
});

test('a unique-index violation at commit becomes a CONFLICT, not a driver error', async () => {
  const transact = mikroOrmTransact((await sharedDatabase()).orm);
  const account = brand();
  const email = `dup-${randomUUID()}@example.com`;
  await transact(async (r) => {
    await r.accounts.save(account);
    await r.contacts.save(
      new Contact({ id: randomUUID(), accountId: account.id, email, apiAccess: true, createdAt: now }),
    );
  });
  const error = await transact((r) =>
    r.contacts.save(
      new Contact({
        id: randomUUID(),
        accountId: account.id,
        email: email.toUpperCase(),
        apiAccess: true,
        createdAt: now,
      }),
    ),
  ).catch((e: unknown) => e);
  assert.instance(error, DomainError);
  assert.is((error as DomainError).code, 'CONFLICT');
});

test("deps derived from a unit's hand on everything: the services, and every repository on the unit's one EntityManager", async () => {
  const clock = { now: () => now };
  const { orm } = await sharedDatabase();
  const unit = unitsOfWork(orm, { clock })();
  const ids = { newId: () => 'x' };
  const derived = Object.create(unit.deps, { ids: { value: ids } }) as typeof unit.deps & { ids: typeof ids };
  assert.is(derived.clock, clock);
  assert.is(derived.ids, ids);
  assert.is(derived.accounts, unit.deps.accounts, 'the same repository, not a second one');
  for (const name of ['accounts', 'contacts', 'jobs', 'events', 'commands', 'deliveryQueue', 'deliveryLog'] as const)
    assert.ok(derived[name], name);
  const account = brand();
  await unit.transaction(async (deps) => {
    await (Object.create(deps) as typeof deps).accounts.save(account);
  });
  assert.ok(
    await unitsOfWork(orm, {})().statements((deps) => deps.accounts.get(account.id)),
    'saved through the derived deps',
  );
  // In the transaction: undone with it.
  const undone = brand();
  const failure = new Error('undo');
  const unit2 = unitsOfWork(orm, { clock })();
  assert.is(
    await unit2
      .transaction(async (deps) => {
        await (Object.create(deps) as typeof deps).accounts.save(undone);
        throw failure;
      })
      .catch((e: unknown) => e),
    failure,
  );
  assert.is(
    await unitsOfWork(orm, {})().statements((deps) => deps.accounts.get(undone.id)),
    null,
    'rolled back with the transaction',
  );
});

test("a unit whose work failed is spent: using it again throws; a transaction's change is undone, a statement stood on its own", async () => {
  const units = unitsOfWork((await sharedDatabase()).orm, {});
  const account = brand();
  await units().transaction((deps) => deps.accounts.save(account));
  for (const mode of ['transaction', 'statements'] as const) {
    const unit = units();
    const failure = new Error(`the work failed in ${mode}`);
    const error = await unit[mode](async (deps) => {
      const mine = (await deps.accounts.get(account.id))!;
      mine.name = 'changed by failed work';
      await deps.accounts.save(mine);
      throw failure;
    }).catch((e: unknown) => e);
    assert.is(error, failure);
    for (const reuse of [
      () => unit.transaction((deps) => deps.accounts.get(account.id)),
      () => unit.statements((deps) => deps.accounts.get(account.id)),
    ]) {
      const refused = await reuse().then(
        () => null,
        (e: unknown) => e,
      );
      assert.instance(refused, Error, `${mode}: a spent unit refuses more work`);
      assert.match((refused as Error).message, /spent/);
      assert.is((refused as Error).cause, failure, 'and names the failure that spent it');
    }
    assert.throws(() => unit.deps, /spent/);
    // A save is one statement (repositories hold no entity to flush later): in a transaction it is undone with the
    // rest; as statements it committed when it ran, as every statement does there.
    const stored = (await units().statements((deps) => deps.accounts.get(account.id)))!.name;
    assert.is(
      stored,
      mode === 'transaction' ? account.name : 'changed by failed work',
      `${mode}: a later unit reads what is stored`,
    );
  }
});

test.run();
