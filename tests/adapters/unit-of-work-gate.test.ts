import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { unitsOfWork } from '../../adapters/persistence/unit-of-work.ts';
import { Account } from '../../domain/account.ts';
import { sharedDatabase } from '../support/shared.ts';

// The statement gate of a unit of work (adapters/persistence/statement-gate.ts): a repository's method asks, at each
// call, whether a transaction is under way, and sends its BEGIN first if so. tests/adapters/unit-of-work.test.ts has
// the rest.
const test = suite('MikroORM unit of work: the statement gate');
const now = new Date('2026-01-01T00:00:00.000Z');
const brand = () => new Account({ id: randomUUID(), name: 'b', role: 'brand', parentId: null, createdAt: now });

test("a repository taken from deps before the transaction (a check's, say) is gated inside it: its save is rolled back", async () => {
  const units = unitsOfWork((await sharedDatabase()).orm, {});
  const unit = units();
  const account = brand();
  // Taken and used before the transaction begins, as a request's checks do: a statement of its own.
  const accounts = unit.deps.accounts;
  assert.is(await accounts.get(account.id), null);
  const failure = new Error('the use case failed after its save');
  // The same reference, not the transaction's deps: were it ungated, the save would commit on its own (no BEGIN sent
  // before it), and the rollback would have nothing to undo.
  const error = await unit
    .transaction(async () => {
      await accounts.save(account);
      throw failure;
    })
    .catch((e: unknown) => e);
  assert.is(error, failure);
  const stored = await units().statements((deps) => deps.accounts.get(account.id));
  assert.is(stored, null, 'the save outlived the rollback: it ran outside the transaction');
  // And the save does write through that reference: in a transaction that succeeds, it commits.
  const other = units();
  const stays = other.deps.accounts;
  await other.transaction(async () => {
    await stays.save(account);
  });
  assert.ok(await units().statements((deps) => deps.accounts.get(account.id)), 'committed with the transaction');
});

test.run();
