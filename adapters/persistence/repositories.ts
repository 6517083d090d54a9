import type { EntityManager } from '@mikro-orm/postgresql';
import type { Repositories } from '../../domain/ports.ts';
import { MikroOrmAccountRepository } from './account-repository.ts';
import { MikroOrmCancellationReasonRepository } from './cancellation-reason-repository.ts';
import { MikroOrmCommandLog } from './command-log.ts';
import { MikroOrmCommandQueue } from './command-queue.ts';
import { MikroOrmContactRepository } from './contact-repository.ts';
import { SqlDeliveryQueue } from './delivery-queue.ts';
import { SqlEventFeed } from './event-feed.ts';
import { SqlEventOutbox } from './event-outbox.ts';
import { MikroOrmInvoiceRepository } from './invoice-repository.ts';
import { SqlJobRepository } from './job-repository.ts';
import { MikroOrmOrderMappingRepository } from './order-mapping-repository.ts';
import { SqlPartnerOrderQueries } from './partner-order-queries.ts';
import { SqlWebhookConfigRepository } from './webhook-config-repository.ts';
import type { WorkNotices } from './work-notices.ts';

// Each repository works on the unit of work's EntityManager: `save` only schedules the write, which
// the surrounding transaction flushes once at its end.
/** The repositories of one unit of work, and what it must do once its work is done, before it commits. */
export function mikroOrmRepositories(em: EntityManager, notices: WorkNotices): { repositories: Repositories; workDone(): Promise<void> } {
  const events = new SqlEventOutbox(em, notices);
  return { repositories: repositoriesOn(em, notices, events), workDone: () => events.writePending() };
}

const repositoriesOn = (em: EntityManager, notices: WorkNotices, events: SqlEventOutbox): Repositories => ({
  accounts: new MikroOrmAccountRepository(em),
  contacts: new MikroOrmContactRepository(em),
  webhookConfigs: new SqlWebhookConfigRepository(em),
  jobs: new SqlJobRepository(em),
  partnerOrders: new SqlPartnerOrderQueries(em),
  invoices: new MikroOrmInvoiceRepository(em),
  cancellationReasons: new MikroOrmCancellationReasonRepository(em),
  orderMappings: new MikroOrmOrderMappingRepository(em),
  events,
  eventFeed: new SqlEventFeed(em),
  commands: new MikroOrmCommandLog(em, notices),
  commandQueue: new MikroOrmCommandQueue(em),
  deliveries: new SqlDeliveryQueue(em, notices),
});
