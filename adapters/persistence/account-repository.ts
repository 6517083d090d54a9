import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../domain/account.ts';
import type { AccountRepository, PartnerFamily } from '../../domain/ports.ts';
import { DETACHED, UnitReads } from './detached.ts';
import { withDriverConnection } from './driver.ts';
import type { FamilyMemo } from './family-memo.ts';
import { type ConfigRow, toConfig } from './rows.ts';
import { isStoredId } from './stored-ids.ts';

// One round trip for everything that decides a polling scope (see PartnerFamily).
const PARTNER_FAMILY = `
  select a.id, a.name, a.role, a.parent_id, a.created_at,
    (select row_to_json(c) from webhook_configs c where c.account_id = a.id and c.scope = 'partner') as own_config,
    (select row_to_json(c) from webhook_configs c where c.account_id = a.parent_id and c.scope = 'partner') as master_config,
    array(select id::text from accounts where parent_id = a.id) as child_ids,
    array(select id::text from accounts where a.parent_id is not null and parent_id = a.parent_id) as sibling_ids
  from accounts a where a.id = $1`;

interface FamilyRow {
  id: string;
  name: string;
  role: Account['role'];
  parent_id: string | null;
  created_at: string;
  own_config: ConfigRow | null;
  master_config: ConfigRow | null;
  child_ids: string[];
  sibling_ids: string[];
}

export class MikroOrmAccountRepository implements AccountRepository {
  constructor(
    private readonly em: EntityManager,
    private readonly families: FamilyMemo,
  ) {}
  private readonly reads = new UnitReads<Account>();
  async get(id: string) {
    return isStoredId(id) ? this.reads.get(id, () => this.em.findOne(Account, { id }, DETACHED)) : null;
  }
  partnerFamily(accountId: string): Promise<PartnerFamily | null> {
    return this.families.get(accountId, (id) => this.readFamily(id));
  }
  private async readFamily(accountId: string): Promise<PartnerFamily | null> {
    if (!isStoredId(accountId)) return null;
    return withDriverConnection(this.em, async (client) => {
      const {
        rows: [row],
      } = await client.query<FamilyRow>({ name: 'partner-family', text: PARTNER_FAMILY, values: [accountId] });
      if (!row) return null;
      return {
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
      };
    });
  }
  async save(account: Account) {
    this.families.forget();
    this.reads.forget(account.id);
    await this.em.upsert(Account, account, DETACHED);
  }
}
