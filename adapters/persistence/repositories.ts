import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  AccountRepository,
  CancellationReasonRepository,
  CommandLog,
  CommandQueue,
  ContactRepository,
  DeliveryLog,
  DeliveryQueue,
  EventFeed,
  InvoiceRepository,
  JobRepository,
  OperatorSearch,
  OrderMappingRepository,
  PartnerOrderQueries,
  Repositories,
  WebhookConfigRepository,
} from '../../domain/ports.ts';
import { type CurrentTrace, untraced } from '../../domain/trace.ts';
import { MikroOrmAccountRepository } from './account-repository.ts';
import { MikroOrmCancellationReasonRepository } from './cancellation-reason-repository.ts';
import { MikroOrmCommandLog } from './command-log.ts';
import { MikroOrmCommandQueue } from './command-queue.ts';
import { MikroOrmContactRepository } from './contact-repository.ts';
import { SqlDeliveryLog } from './delivery-log.ts';
import { SqlDeliveryQueue } from './delivery-queue.ts';
import { type ReadOn, withDriverConnection } from './driver.ts';
import { SqlEventFeed } from './event-feed.ts';
import { SqlEventOutbox } from './event-outbox.ts';
import { FamilyMemo } from './family-memo.ts';
import { MikroOrmInvoiceRepository } from './invoice-repository.ts';
import { SqlJobRepository } from './job-repository.ts';
import { SqlOperatorSearch } from './operator-search.ts';
import { MikroOrmOrderMappingRepository } from './order-mapping-repository.ts';
import { SqlPartnerOrderQueries } from './partner-order-queries.ts';
import type { WorkNotices } from './wake-ups/notices.ts';
import { SqlWebhookConfigRepository } from './webhook-config-repository.ts';

/**
 * The repositories of one unit of work, all on its EntityManager, each built when first asked for. A save is one
 * statement when it is called (see detached.ts); events wait for `workDone`, written in two statements at the end.
 */
export class UnitRepositories implements Repositories {
  private accountRepository?: AccountRepository;
  private contactRepository?: ContactRepository;
  private configRepository?: WebhookConfigRepository;
  private jobRepository?: JobRepository;
  private orderQueries?: PartnerOrderQueries;
  private invoiceRepository?: InvoiceRepository;
  private reasonRepository?: CancellationReasonRepository;
  private mappingRepository?: OrderMappingRepository;
  private outbox?: SqlEventOutbox;
  private feed?: EventFeed;
  private commandLog?: CommandLog;
  private queue?: CommandQueue;
  private sendQueue?: DeliveryQueue;
  private log?: DeliveryLog;
  private search?: OperatorSearch;

  private readonly families = new FamilyMemo();

  constructor(
    private readonly em: EntityManager,
    private readonly notices: WorkNotices,
    /** Where the reads a replica may answer run (CONTRACT §12): the unit of work decides. */
    private readonly reads: ReadOn = withDriverConnection,
    private readonly trace: CurrentTrace = untraced,
  ) {}

  get accounts() {
    return (this.accountRepository ??= new MikroOrmAccountRepository(this.em, this.families));
  }
  get contacts() {
    return (this.contactRepository ??= new MikroOrmContactRepository(this.em, this.families));
  }
  get webhookConfigs() {
    return (this.configRepository ??= new SqlWebhookConfigRepository(this.em, this.families));
  }
  get jobs() {
    return (this.jobRepository ??= new SqlJobRepository(this.em, this.reads));
  }
  get partnerOrders() {
    return (this.orderQueries ??= new SqlPartnerOrderQueries(this.em, undefined, this.reads));
  }
  get invoices() {
    return (this.invoiceRepository ??= new MikroOrmInvoiceRepository(this.em));
  }
  get cancellationReasons() {
    return (this.reasonRepository ??= new MikroOrmCancellationReasonRepository(this.em));
  }
  get orderMappings() {
    return (this.mappingRepository ??= new MikroOrmOrderMappingRepository(this.em));
  }
  get events() {
    return (this.outbox ??= new SqlEventOutbox(this.em, this.notices, this.trace));
  }
  get eventFeed() {
    return (this.feed ??= new SqlEventFeed(this.em, this.reads));
  }
  get commands() {
    return (this.commandLog ??= new MikroOrmCommandLog(this.em, this.notices, this.trace));
  }
  get commandQueue() {
    return (this.queue ??= new MikroOrmCommandQueue(this.em));
  }
  get deliveryQueue() {
    return (this.sendQueue ??= new SqlDeliveryQueue(this.em));
  }
  get deliveryLog() {
    return (this.log ??= new SqlDeliveryLog(this.em, this.notices, this.reads));
  }
  get operatorSearch() {
    return (this.search ??= new SqlOperatorSearch(this.em));
  }

  /** What the work left to write once it is done: the events it emitted (two statements, whatever their number). */
  async workDone(): Promise<void> {
    await this.outbox?.writePending();
  }

  /** Forgets what a rolled-back transaction left to write. */
  discardPending(): void {
    this.outbox?.discardPending();
  }
}
