import type { EntityManager } from '@mikro-orm/postgresql';
import type { Repositories } from '../../domain/ports.ts';
import { MikroOrmAccountRepository } from './account-repository.ts';
import { MikroOrmCancellationReasonRepository } from './cancellation-reason-repository.ts';
import { MikroOrmCommandLog } from './command-log.ts';
import { MikroOrmCommandQueue } from './command-queue.ts';
import { MikroOrmContactRepository } from './contact-repository.ts';
import { SqlEventOutbox } from './event-outbox.ts';
import { MikroOrmInvoiceRepository } from './invoice-repository.ts';
import { MikroOrmJobRepository } from './job-repository.ts';
import { MikroOrmOrderMappingRepository } from './order-mapping-repository.ts';
import { SqlPartnerOrderQueries } from './partner-order-queries.ts';
import { MikroOrmWebhookConfigRepository } from './webhook-config-repository.ts';
import type { WorkNotices } from './work-notices.ts';

// Each repository works on the unit of work's EntityManager: `save` only schedules the write, which
// the surrounding transaction flushes once at its end.
export const mikroOrmRepositories = (em: EntityManager, notices: WorkNotices): Repositories => ({
  accounts: new MikroOrmAccountRepository(em),
  contacts: new MikroOrmContactRepository(em),
  webhookConfigs: new MikroOrmWebhookConfigRepository(em),
  jobs: new MikroOrmJobRepository(em),
  partnerOrders: new SqlPartnerOrderQueries(em),
  invoices: new MikroOrmInvoiceRepository(em),
  cancellationReasons: new MikroOrmCancellationReasonRepository(em),
  orderMappings: new MikroOrmOrderMappingRepository(em),
  events: new SqlEventOutbox(em, notices),
  commands: new MikroOrmCommandLog(em, notices),
  commandQueue: new MikroOrmCommandQueue(em),
});
