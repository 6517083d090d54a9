import type { AccountMatch, Deps } from '../ports.ts';

export const ACCOUNT_SEARCH_LIMIT = { default: 20, max: 100 } as const;

/** admin.accounts.search: accounts by a part of their name or of a contact's e-mail address, by name. */
export function searchAccounts(
  deps: Pick<Deps, 'operatorSearch'>,
  input: { text: string; limit?: number },
): Promise<AccountMatch[]> {
  return deps.operatorSearch.accounts(input.text.trim(), input.limit ?? ACCOUNT_SEARCH_LIMIT.default);
}
