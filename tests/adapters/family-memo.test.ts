import { suite } from 'uvu';
import * as assert from 'uvu/assert';
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

test.run();
