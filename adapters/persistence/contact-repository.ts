import { type EntityManager, raw } from '@mikro-orm/postgresql';
import { Contact, normalizeEmail } from '../../domain/contact.ts';
import type { ContactRepository } from '../../domain/ports.ts';
import { DETACHED, UnitReads } from './detached.ts';
import { withDriverConnection } from './driver.ts';
import { isStoredId } from './stored-ids.ts';

export class MikroOrmContactRepository implements ContactRepository {
  constructor(private readonly em: EntityManager) {}
  private readonly reads = new UnitReads<Contact>();
  async get(id: string) {
    return isStoredId(id) ? this.reads.get(id, () => this.em.findOne(Contact, { id }, DETACHED)) : null;
  }
  findByEmail(email: string) {
    return this.em.findOne(Contact, { [raw('lower(email)')]: normalizeEmail(email) }, DETACHED);
  }
  async accessOf(contactId: string) {
    if (!isStoredId(contactId)) return null;
    return withDriverConnection(this.em, async (client) => {
      const {
        rows: [row],
      } = await client.query<{ account_id: string; api_access: boolean }>({
        name: 'contact-access',
        text: 'select account_id, api_access from contacts where id = $1',
        values: [contactId],
      });
      return row ? { accountId: row.account_id, apiAccess: row.api_access } : null;
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
    this.reads.forget(contact.id);
    await this.em.upsert(Contact, contact, DETACHED);
  }
}
