import { type CancellationReason, SEEDED_CANCELLATION_REASONS } from '../../domain/cancellation.ts';
import type { JobIdentifier } from '../../domain/command.ts';
import type { Invoice } from '../../domain/invoice.ts';
import { INACTIVE_STATUSES, type Job } from '../../domain/job.ts';
import type { OrderMapping } from '../../domain/order-mapping.ts';
import type { OrderFilter } from '../../domain/orders.ts';
import type {
  CancellationReasonRepository,
  InvoiceRepository,
  JobRepository,
  OrderMappingRepository,
  PartnerOrderQueries,
} from '../../domain/ports.ts';
import { copy, Table } from './table.ts';

export class InMemoryJobRepository implements JobRepository {
  private readonly table = new Table<Job>();
  private lastOrderNumber = 1_000_000_000;
  async get(apiId: string) {
    return this.table.get(apiId);
  }
  /** One unit of work at a time here: nothing to lock. */
  async getForChange(apiId: string) {
    return this.table.get(apiId);
  }
  async lockForChange(_apiIds: readonly string[]) {}
  private named(identifier: JobIdentifier) {
    const field = (
      { jobApiId: 'apiId', invoicingEid: 'invoicingEid', gidOrderNumber: 'name', yourOrderID: 'extPartnerId' } as const
    )[identifier.kind];
    return this.all()
      .filter((j) => j[field] === identifier.value)
      .sort((a, b) => (a.apiId < b.apiId ? -1 : 1));
  }
  async findByIdentifier(identifier: JobIdentifier, partnerIds: readonly string[], limit: number) {
    return this.named(identifier)
      .filter((j) => j.partnerId !== null && partnerIds.includes(j.partnerId))
      .slice(0, limit);
  }
  async identifies(identifier: JobIdentifier) {
    return this.named(identifier).length > 0;
  }
  async save(job: Job) {
    this.table.put(job.apiId, job);
  }
  async nextOrderNumber() {
    return `O-${String(++this.lastOrderNumber).padStart(10, '0')}`;
  }
  all(): Job[] {
    return [...this.table.rows.values()].map(copy);
  }
}

/** The listings' semantics in plain JavaScript: the reference the SQL is held to. */
export class InMemoryPartnerOrderQueries implements PartnerOrderQueries {
  constructor(private readonly jobs: InMemoryJobRepository) {}
  private select(partnerIds: readonly string[], filter: OrderFilter) {
    return this.jobs
      .all()
      .filter((j) => j.partnerId !== null && partnerIds.includes(j.partnerId))
      .filter((j) => !filter.updatedSince || j.updatedAt.getTime() >= filter.updatedSince.getTime())
      .filter((j) => !filter.active || !INACTIVE_STATUSES.includes(j.status))
      .sort(
        (a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.apiId < b.apiId ? -1 : a.apiId > b.apiId ? 1 : 0),
      );
  }
  async page(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number) {
    return this.select(partnerIds, filter).slice(offset, offset + limit);
  }
  async count(partnerIds: readonly string[], filter: OrderFilter) {
    return this.select(partnerIds, filter).length;
  }
  async *stream(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number | null) {
    const rows = this.select(partnerIds, filter).slice(offset, limit === null ? undefined : offset + limit);
    for (let i = 0; i < rows.length; i += 2) yield rows.slice(i, i + 2);
  }
}

export class InMemoryInvoiceRepository implements InvoiceRepository {
  private readonly table = new Table<Invoice>();
  async get(id: string) {
    return this.table.get(id);
  }
  async save(invoice: Invoice) {
    this.table.put(invoice.id, invoice);
  }
}

export class InMemoryCancellationReasonRepository implements CancellationReasonRepository {
  private readonly table = new Table<CancellationReason>();
  constructor() {
    for (const reason of SEEDED_CANCELLATION_REASONS) this.table.put(reason.name, reason);
  }
  async get(name: string) {
    return this.table.get(name);
  }
  async save(reason: CancellationReason) {
    this.table.put(reason.name, reason);
  }
}

export class InMemoryOrderMappingRepository implements OrderMappingRepository {
  private readonly table = new Table<OrderMapping>();
  async get(brandAccountId: string) {
    return this.table.get(brandAccountId);
  }
  async save(mapping: OrderMapping) {
    this.table.put(mapping.brandAccountId, mapping);
  }
}
