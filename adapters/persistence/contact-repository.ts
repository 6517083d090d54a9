import { raw, type EntityManager } from '@mikro-orm/postgresql';
import { Contact, normalizeEmail } from '../../domain/contact.ts';
import type { ContactRepository } from '../../domain/ports.ts';
import { withDriverConnection } from './driver.ts';

export class MikroOrmContactRepository implements ContactRepository {
  constructor(private readonly em: EntityManager) {}
  get(id: string) { return this.em.findOne(Contact, { id }); }
  findByEmail(email: string) {
    return this.em.findOne(Contact, { [raw('lower(email)')]: normalizeEmail(email) });
  }
  accessOf(contactId: string) {
    return withDriverConnection(this.em, async (client) => {
      const { rows: [row] } = await client.query<{ account_id: string; api_access: boolean }>({
        name: 'contact-access', text: 'select account_id, api_access from contacts where id = $1', values: [contactId],
      });
      return row ? { accountId: row.account_id, apiAccess: row.api_access } : null;
    });
  }
  async save(contact: Contact) { this.em.persist(contact); }
}
