import { type EntityManager, raw } from '@mikro-orm/postgresql';
import { Contact, normalizeEmail } from '../../domain/contact.ts';
import type { ContactRepository } from '../../domain/ports.ts';
import { DETACHED, UnitReads } from './detached.ts';
import { withDriverConnection } from './driver.ts';
import type { FamilyMemo } from './family-memo.ts';
import { type FamilyRow, PARTNER_FAMILY_COLUMNS, toPartnerFamily } from './partner-family-sql.ts';
import { isStoredId } from './stored-ids.ts';

// A contact's access, and when its account is a partner the account's family in the same round trip: a partner's
// request reads it next (its signature keys, its polling scope, its endpoint), and gets it from the unit's memo. Every
// partner request reads it so, also the few routes that do not use it (a command's result, /v3/me).
const CONTACT_ACCESS = `
  select ct.account_id, ct.api_access,
    (select to_json(f) from (
      select ${PARTNER_FAMILY_COLUMNS} from accounts a where a.id = ct.account_id and a.role = 'partner') f) as family
  from contacts ct where ct.id = $1`;

export class MikroOrmContactRepository implements ContactRepository {
  constructor(
    private readonly em: EntityManager,
    private readonly families: FamilyMemo,
  ) {}
  private readonly reads = new UnitReads<Contact>();
  async get(id: string) {
    return isStoredId(id) ? this.reads.get(id, () => this.em.findOne(Contact, { id }, DETACHED)) : null;
  }
  findByEmail(email: string) {
    return this.em.findOne(Contact, { [raw('lower(email)')]: normalizeEmail(email) }, DETACHED);
  }
  async accessOf(contactId: string) {
    if (!isStoredId(contactId)) return null;
    const readStarted = this.families.readStarts();
    return withDriverConnection(this.em, async (client) => {
      const {
        rows: [row],
      } = await client.query<{ account_id: string; api_access: boolean; family: FamilyRow | null }>({
        name: 'contact-access-v2',
        text: CONTACT_ACCESS,
        values: [contactId],
      });
      if (!row) return null;
      if (row.family) this.families.prime(row.account_id, toPartnerFamily(row.family), readStarted);
      return { accountId: row.account_id, apiAccess: row.api_access };
    });
  }
  async emailsWithApiAccess(accountId: string) {
    if (!isStoredId(accountId)) return [];
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<{ email: string }>({
        name: 'contacts-with-api-access',
        text: 'select email from contacts where account_id = $1 and api_access order by created_at, id',
        values: [accountId],
      });
      return rows.map((r) => r.email);
    });
  }
  async save(contact: Contact) {
    await this.reads.writing(contact.id, () => this.em.upsert(Contact, contact, DETACHED));
  }
}
