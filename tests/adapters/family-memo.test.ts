import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UnitReads } from '../../adapters/persistence/detached.ts';
import { FamilyMemo } from '../../adapters/persistence/family-memo.ts';
import { Account } from '../../domain/account.ts';
import type { PartnerFamily } from '../../domain/ports.ts';

// The unit of work's memo of partner families: a family read with a contact's access is kept only if nothing was saved
// since that read began.
const test = suite('family memo');

const family = (name: string): PartnerFamily => ({
  account: new Account({ id: 'a', name, role: 'partner', parentId: null, createdAt: new Date(0) }),
  ownConfig: null,
  masterConfig: null,
  childIds: [],
  siblingIds: [],
});

test('a family read before a save is not kept after it; one read after the last save is', async () => {
  const memo = new FamilyMemo();
  const reads: string[] = [];
  const read = async () => {
    reads.push('read');
    return family('read again');
  };
  const started = memo.readStarts();
  memo.forget(); // a save while the access was being read
  memo.prime('a', family('read before the save'), started);
  assert.is((await memo.get('a', read))?.account.name, 'read again');
  assert.equal(reads, ['read']);

  const fresh = new FamilyMemo();
  fresh.prime('a', family('read with the access'), fresh.readStarts());
  assert.is((await fresh.get('a', read))?.account.name, 'read with the access');
  assert.equal(reads, ['read'], 'no read: the primed family is kept');
});

/** A write the test ends: `end` resolves it. */
const writeUnderWay = () => {
  let end = () => {};
  const written = new Promise<void>((resolve) => {
    end = resolve;
  });
  return { write: () => written, end };
};

test('a family read while a save is under way is not kept after it', async () => {
  const memo = new FamilyMemo();
  let stored = 'before the save';
  const read = async () => family(stored);
  const { write, end } = writeUnderWay();
  const saving = memo.writing(write);
  assert.is((await memo.get('a', read))?.account.name, 'before the save', 'read beside the write, as it stood');
  stored = 'after the save';
  end();
  await saving;
  assert.is((await memo.get('a', read))?.account.name, 'after the save');
});

test("a unit's read of a key while its save is under way is not kept after it", async () => {
  const reads = new UnitReads<string>();
  let stored = 'before the save';
  const read = async () => stored;
  const { write, end } = writeUnderWay();
  const saving = reads.writing('k', write);
  assert.is(await reads.get('k', read), 'before the save');
  stored = 'after the save';
  end();
  await saving;
  assert.is(await reads.get('k', read), 'after the save');
  assert.is(await reads.get('other', read), 'after the save', 'another key');
});

test('a write that fails is forgotten around too, and its error is what the save throws', async () => {
  const reads = new UnitReads<string>();
  let stored = 'before the write';
  const read = async () => stored;
  let fail = (_: Error) => {};
  const failing = new Promise<void>((_, reject) => {
    fail = reject;
  });
  const saving = reads.writing('k', () => failing);
  assert.is(await reads.get('k', read), 'before the write', 'read beside the write');
  stored = 'what the failed write left (another writer)';
  const failure = new Error('the write failed');
  fail(failure);
  assert.is(await saving.catch((e: unknown) => e), failure);
  assert.is(await reads.get('k', read), 'what the failed write left (another writer)', 'read again after it');
});

test('a read that fails after a save leaves the read made since in the memo', async () => {
  const memo = new FamilyMemo();
  let fail = (_: Error) => {};
  const failing = new Promise<PartnerFamily | null>((_, reject) => {
    fail = reject;
  });
  const first = memo.get('a', () => failing);
  memo.forget(); // a save
  let reads = 0;
  const fresh = async () => {
    reads++;
    return family('read after the save');
  };
  assert.is((await memo.get('a', fresh))?.account.name, 'read after the save');
  fail(new Error('the read before the save failed'));
  await first.catch(() => {});
  assert.is((await memo.get('a', fresh))?.account.name, 'read after the save');
  assert.is(reads, 1, 'kept: not read a second time');
  const again = new FamilyMemo();
  const lost = again.get('a', () => Promise.reject(new Error('failed')));
  await lost.catch(() => {});
  assert.is((await again.get('a', fresh))?.account.name, 'read after the save', 'a failed read alone is not kept');
  assert.is(reads, 2);
});

test("a unit's read that fails is read again next time", async () => {
  const reads = new UnitReads<string>();
  let calls = 0;
  const failing = async () => {
    calls++;
    throw new Error('the database is away');
  };
  await reads.get('k', failing).catch(() => {});
  assert.is(await reads.get('k', async () => `read ${++calls}`), 'read 2', 'not the failure kept');
  assert.is(await reads.get('k', failing), 'read 2', 'a read that succeeded is kept');
});

test.run();
