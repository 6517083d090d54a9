import type { EntityManager } from '@mikro-orm/postgresql';
import { Invoice } from '../../domain/invoice.ts';
import type { InvoiceRepository } from '../../domain/ports.ts';
import { isStoredId } from './stored-ids.ts';

export class MikroOrmInvoiceRepository implements InvoiceRepository {
  constructor(private readonly em: EntityManager) {}
  async get(id: string) { return isStoredId(id) ? this.em.findOne(Invoice, { id }) : null; }
  async save(invoice: Invoice) { this.em.persist(invoice); }
}
