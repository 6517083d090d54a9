import type { Principal } from '../auth.ts';
import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

/**
 * GET /v3/me: who the token speaks for, as people know them: the account's name and role, the contact's e-mail (the
 * portal's header shows them, so that nobody works in an account they did not mean to).
 */
export async function whoAmI(deps: Pick<Deps, 'accounts' | 'contacts'>, principal: Principal) {
  const [account, contact] = await Promise.all([
    deps.accounts.get(principal.accountId),
    deps.contacts.get(principal.contactId),
  ]);
  if (!account || !contact) throw notFound('Your account');
  return {
    role: principal.role,
    account: { id: account.id, name: account.name, parentId: account.parentId },
    contact: { id: contact.id, email: contact.email },
  };
}
