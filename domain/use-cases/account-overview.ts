import type { Account } from '../account.ts';
import type { Contact } from '../contact.ts';
import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';
import { SCOPES, type WebhookConfig } from '../webhook-config.ts';

export interface AccountOverview {
  account: Account;
  /** Its master account, for a child partner. */
  parent: Account | null;
  children: Account[];
  contacts: Contact[];
  /** Its configurations that exist, brand scope first. */
  configs: WebhookConfig[];
}

/** admin.accounts.get: what an operator reads of one account: its place in the hierarchy, contacts, endpoints. */
export async function accountOverview(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'operatorSearch'>,
  accountId: string,
): Promise<AccountOverview> {
  const account = await deps.accounts.get(accountId);
  if (!account) throw notFound('The account');
  const [parent, children, contacts, ...configs] = await Promise.all([
    account.parentId ? deps.accounts.get(account.parentId) : null,
    deps.operatorSearch.childrenOf(account.id),
    deps.operatorSearch.contactsOf(account.id),
    ...SCOPES.map((scope) => deps.webhookConfigs.find(account.id, scope)),
  ]);
  return { account, parent, children, contacts, configs: configs.filter((c) => c !== null) };
}
