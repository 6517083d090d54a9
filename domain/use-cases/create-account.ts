import { Account, type Role } from '../account.ts';
import type { Deps } from '../ports.ts';

export interface CreateAccountInput {
  name: string;
  role: Role;
  parentId?: string | null;
}

export async function createAccount(
  deps: Pick<Deps, 'accounts' | 'clock' | 'ids'>,
  input: CreateAccountInput,
): Promise<Account> {
  const parentId = input.parentId ?? null;
  const parent = parentId ? await deps.accounts.get(parentId) : null;
  const account = Account.create(
    { id: deps.ids.newId(), name: input.name.trim(), role: input.role, parentId, createdAt: deps.clock.now() },
    parent,
  );
  await deps.accounts.save(account);
  return account;
}
