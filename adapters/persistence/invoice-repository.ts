import type { EntityManager } from '@mikro-orm/postgresql';
import { Invoice } from '../../domain/invoice.ts';
import type { InvoiceRepository } from '../../domain/ports.ts';

export class MikroOrmInvoiceRepository implements InvoiceRepository {
  constructor(private readonly em: EntityManager) {}
  get(id: string) { return this.em.findOne(Invoice, { id }); }
  async save(invoice: Invoice) { this.em.persist(invoice); }
}
