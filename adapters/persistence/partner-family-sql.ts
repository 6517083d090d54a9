import { Account } from '../../domain/account.ts';
import type { PartnerFamily } from '../../domain/ports.ts';
import { type ConfigRow, toConfig } from './rows.ts';

// Everything that decides a polling scope (see PartnerFamily), as the columns of one select over `accounts a`: read
// alone (the account repository), or with a partner contact's access in the same round trip (the contact repository).
export const PARTNER_FAMILY_COLUMNS = `a.id, a.name, a.role, a.parent_id, a.created_at,
    (select row_to_json(c) from webhook_configs c where c.account_id = a.id and c.scope = 'partner') as own_config,
    (select row_to_json(c) from webhook_configs c where c.account_id = a.parent_id and c.scope = 'partner') as master_config,
    array(select id::text from accounts where parent_id = a.id) as child_ids,
    array(select id::text from accounts where a.parent_id is not null and parent_id = a.parent_id) as sibling_ids`;

export interface FamilyRow {
  id: string;
  name: string;
  role: Account['role'];
  parent_id: string | null;
  /** A timestamp's text, or its JSON text when the row comes as JSON. */
  created_at: string;
  own_config: ConfigRow | null;
  master_config: ConfigRow | null;
  child_ids: string[];
  sibling_ids: string[];
}

export const toPartnerFamily = (row: FamilyRow): PartnerFamily => ({
  account: new Account({
    id: row.id,
    name: row.name,
    role: row.role,
    parentId: row.parent_id,
    createdAt: new Date(row.created_at),
  }),
  ownConfig: row.own_config && toConfig(row.own_config),
  masterConfig: row.master_config && toConfig(row.master_config),
  childIds: row.child_ids,
  siblingIds: row.sibling_ids,
});
