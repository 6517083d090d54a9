import type { EntityManager } from '@mikro-orm/postgresql';
import { Invoice } from '../../domain/invoice.ts';
import type { InvoiceRepository } from '../../domain/ports.ts';
import { DETACHED } from './detached.ts';
import { isStoredId } from './stored-ids.ts';

export class MikroOrmInvoiceRepository implements InvoiceRepository {
  constructor(private readonly em: EntityManager) {}
  async get(id: string) { return isStoredId(id) ? this.em.findOne(Invoice, { id }, DETACHED) : null; }
  async save(invoice: Invoice) { await this.em.upsert(Invoice, invoice, DETACHED); }
}
