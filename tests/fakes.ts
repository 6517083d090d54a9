// The in-memory ports, one family a file under tests/fakes/, and the two functions that assemble them.
import { InMemoryStreamSlots } from '../adapters/stream-slots.ts';
import type { Deps, Repositories } from '../domain/ports.ts';
import {
  InMemoryAccountRepository,
  InMemoryContactRepository,
  InMemoryWebhookConfigRepository,
} from './fakes/accounts.ts';
import { InMemoryCommandLog, InMemoryCommandQueue } from './fakes/commands.ts';
import {
  InMemoryDeliveryLog,
  InMemoryDeliveryQueue,
  InMemoryDeliveryStore,
  InMemoryEventFeed,
  InMemoryEventOutbox,
  ScriptedWebhookSender,
} from './fakes/deliveries.ts';
import {
  InMemoryCancellationReasonRepository,
  InMemoryInvoiceRepository,
  InMemoryJobRepository,
  InMemoryOrderMappingRepository,
  InMemoryPartnerOrderQueries,
} from './fakes/jobs.ts';
import { InMemoryOperatorSearch } from './fakes/operators.ts';
import {
  allowAllTargets,
  CountingLoginLimiter,
  CountingRateLimiter,
  FixedClock,
  InMemoryTokenService,
  QueuedDeferrer,
  RecordingMailer,
  SequentialIds,
  SequentialKeys,
} from './fakes/services.ts';

export * from './fakes/accounts.ts';
export * from './fakes/commands.ts';
export * from './fakes/deliveries.ts';
export * from './fakes/jobs.ts';
export * from './fakes/operators.ts';
export * from './fakes/services.ts';

export const inMemoryRepositories = () => {
  const jobs = new InMemoryJobRepository();
  const webhookConfigs = new InMemoryWebhookConfigRepository();
  const commands = new InMemoryCommandLog();
  const deliveries = new InMemoryDeliveryStore();
  const events = new InMemoryEventOutbox(deliveries);
  const eventFeed = new InMemoryEventFeed(events);
  const accounts = new InMemoryAccountRepository(webhookConfigs);
  const contacts = new InMemoryContactRepository();
  return {
    accounts,
    contacts,
    webhookConfigs,
    jobs,
    partnerOrders: new InMemoryPartnerOrderQueries(jobs),
    invoices: new InMemoryInvoiceRepository(),
    cancellationReasons: new InMemoryCancellationReasonRepository(),
    orderMappings: new InMemoryOrderMappingRepository(),
    events,
    eventFeed,
    commands,
    commandQueue: new InMemoryCommandQueue(commands),
    deliveryQueue: new InMemoryDeliveryQueue(deliveries, webhookConfigs, eventFeed),
    deliveryLog: new InMemoryDeliveryLog(deliveries, webhookConfigs),
    operatorSearch: new InMemoryOperatorSearch({ accounts, contacts, configs: webhookConfigs, commands, deliveries }),
  } satisfies Repositories;
};

export function fakeDeps() {
  const repositories = inMemoryRepositories();
  const clock = new FixedClock();
  return {
    ...repositories,
    clock,
    ids: new SequentialIds(),
    webhookSender: new ScriptedWebhookSender(clock),
    webhookTargets: allowAllTargets,
    tokens: new InMemoryTokenService(),
    links: {
      portalSignIn: (token: string) => `http://portal.test/portal/#refresh=${token}`,
      portalFailedDeliveries: () => 'http://portal.test/portal/#/deliveries?status=failed',
    },
    mailer: new RecordingMailer(),
    loginLimiter: new CountingLoginLimiter(),
    endpointTestLimiter: new CountingRateLimiter(),
    requestLimiter: new CountingRateLimiter(1_000_000),
    streamSlots: new InMemoryStreamSlots(2),
    deferrer: new QueuedDeferrer(),
    keys: new SequentialKeys(),
    signatures: {
      matches: (key: string, body: Uint8Array, signature: string) =>
        signature.toLowerCase() === `sig(${key}:${Buffer.from(body).toString()})`,
    },
  } satisfies Deps;
}
export type FakeDeps = ReturnType<typeof fakeDeps>;
