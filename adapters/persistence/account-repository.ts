import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../domain/account.ts';
import type { AccountRepository, PartnerFamily } from '../../domain/ports.ts';
import { DETACHED, UnitReads } from './detached.ts';
import { withDriverConnection } from './driver.ts';
import type { FamilyMemo } from './family-memo.ts';
import { type FamilyRow, PARTNER_FAMILY_COLUMNS, toPartnerFamily } from './partner-family-sql.ts';
import { isStoredId } from './stored-ids.ts';

const PARTNER_FAMILY = `select ${PARTNER_FAMILY_COLUMNS} from accounts a where a.id = $1`;

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
      return row ? toPartnerFamily(row) : null;
    });
  }
  async save(account: Account) {
    await this.families.writing(() => this.reads.writing(account.id, () => this.em.upsert(Account, account, DETACHED)));
  }
}
