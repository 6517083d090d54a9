import type { EntityManager } from '@mikro-orm/postgresql';
import { Invoice } from '../../domain/invoice.ts';
import type { InvoiceRepository } from '../../domain/ports.ts';
import { DETACHED, UnitReads } from './detached.ts';
import { isStoredId } from './stored-ids.ts';

export class MikroOrmInvoiceRepository implements InvoiceRepository {
  constructor(private readonly em: EntityManager) {}
  private readonly reads = new UnitReads<Invoice>();
  async get(id: string) {
    return isStoredId(id) ? this.reads.get(id, () => this.em.findOne(Invoice, { id }, DETACHED)) : null;
  }
  async save(invoice: Invoice) {
    await this.reads.writing(invoice.id, () => this.em.upsert(Invoice, invoice, DETACHED));
  }
}
