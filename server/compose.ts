import { join } from 'node:path';
import { FileMailer } from '../adapters/mail/file-mailer.ts';
import { RetryingMailer } from '../adapters/mail/retrying-mailer.ts';
import { SmtpMailer } from '../adapters/mail/smtp-mailer.ts';
import { type Database, openDatabase } from '../adapters/persistence/database/open.ts';
import { operationalStats } from '../adapters/persistence/operational-stats.ts';
import { unitsOfWork } from '../adapters/persistence/unit-of-work.ts';
import { notifyWork, workAnnouncer } from '../adapters/persistence/wake-ups/announcer.ts';
import { listenForWork } from '../adapters/persistence/wake-ups/listener.ts';
import { FlexibleLoginRateLimiter, FlexibleRateLimiter } from '../adapters/rate-limit.ts';
import { loadJwtKey } from '../adapters/secret.ts';
import { hmacSignatures, keyMaker } from '../adapters/signatures.ts';
import { InMemoryStreamSlots, PostgresStreamSlots } from '../adapters/stream-slots.ts';
import { AdjustableClock, randomIds, systemClock } from '../adapters/system.ts';
import { JoseTokenService } from '../adapters/tokens.ts';
import { ScriptedWebhookSender } from '../adapters/webhooks/scripted-sender.ts';
import { UndiciWebhookSender } from '../adapters/webhooks/sender.ts';
import { DnsWebhookTargetPolicy } from '../adapters/webhooks/target-policy.ts';
import type {
  Clock,
  IdGenerator,
  LoginRateLimiter,
  Mailer,
  ProcessServices,
  WebhookSender,
  WebhookTargetPolicy,
} from '../domain/ports.ts';
import type { Config } from './config.ts';
import { createHttpApp, workerHttpApp } from './http/app.ts';
import { documentedRoute } from './http/route-of.ts';
import { traceRequests } from './http/trace-requests.ts';
import { createLogger, failureLevel, type Logger } from './logger.ts';
import { createMetrics } from './metrics.ts';
import { buildOpenApiDocument } from './openapi/document.ts';
import { createFairUse } from './pipeline/fair-use.ts';
import { readReplicas } from './read-replicas.ts';
import { routeTable } from './routers/contracts.ts';
import { appRouter } from './routers/index.ts';
import { seedDemo } from './seed-demo.ts';
import type { Services } from './services.ts';
import { commandExecutor, commandResultPurge } from './worker/command-executor.ts';
import { createDeferrer } from './worker/deferrer.ts';
import { deliveryPump, deliveryQueueSweep, eventRetentionPurge } from './worker/delivery-pump.ts';
import { eventSequencer } from './worker/event-sequencer.ts';
import { WorkSignal } from './worker/wake-up-signal.ts';
import { createWorker } from './worker/worker.ts';
import { useWireMessages } from './zod-messages.ts';

export interface BuildOverrides {
  logger?: Logger;
  /** A database opened by the caller, who then also closes it (tests share one across apps). */
  database?: Database;
  clock?: Clock;
  ids?: IdGenerator;
  webhookTargets?: WebhookTargetPolicy;
  mailer?: Mailer;
  loginLimiter?: LoginRateLimiter;
  webhookSender?: WebhookSender;
  /**
   * What GET /metrics answers, given this process's registry (a cluster's processes add theirs up: server/processes/).
   */
  scrapeMetrics?: () => Promise<string>;
  /** False in all but one process of a cluster: what holds for the whole start (settings, a key) is said once. */
  sayStartAdvice?: boolean;
}

/** The composition root: the one place that picks adapters and wires them to the core and the edge. */
export async function buildApp(config: Config, overrides: BuildOverrides = {}) {
  useWireMessages();
  const log = overrides.logger ?? createLogger(config.logLevel, config.logFormat, false, { traced: config.tracing });
  const database =
    overrides.database ??
    (await openDatabase({
      url: config.databaseUrl,
      pgliteDir: config.pgliteDir,
      embeddedIdleTimeoutMs: config.testEmbeddedDropIdleMs,
      poolSize: config.databasePoolSize,
      timeoutMs: config.databaseTimeoutMs,
      notice: (message) => log.warn(message),
      settingsAdvice: overrides.sayStartAdvice === false ? undefined : (message) => log.warn(message),
      driverWarning: (message) => log.warn({ source: 'connection pool' }, message),
      upkeepWarning: (message) => log.warn({ source: 'embedded upkeep' }, message),
      // Said as it begins, not with the next block of lines: the step may keep the event loop busy for seconds.
      progress: (message) => {
        log.info(message);
        log.flush();
      },
    }));
  log.info({ database: database.kind }, 'database ready');

  const testClock = config.testClock ? new AdjustableClock() : null;
  const clock = overrides.clock ?? testClock ?? systemClock;
  const ids = overrides.ids ?? randomIds;
  const jwtKey = await loadJwtKey(config.jwtSecret, config.dataDir);
  if (jwtKey.generated && overrides.sayStartAdvice !== false)
    log.warn({ path: jwtKey.path }, 'JWT_SECRET is not set: using a generated key kept in the data folder');

  const webhookSender =
    overrides.webhookSender ??
    new UndiciWebhookSender({
      timeoutMs: config.webhookTimeoutMs,
      allowPrivateTargets: config.webhookAllowPrivateTargets,
      connectionsPerOrigin: config.webhookMaxInFlight,
      clock,
    });
  const publicUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  const perProcess = {
    clock,
    ids,
    webhookSender,
    webhookTargets: overrides.webhookTargets ?? new DnsWebhookTargetPolicy(config.webhookAllowPrivateTargets),
    tokens: new JoseTokenService(
      jwtKey.key,
      ids,
      config.jwtSecretPrevious ? [new TextEncoder().encode(config.jwtSecretPrevious)] : [],
    ),
    signatures: hmacSignatures,
    keys: keyMaker,
    mailer: overrides.mailer ?? chooseMailer(config, log),
    links: {
      portalSignIn: (token: string) => `${publicUrl}/portal/#refresh=${encodeURIComponent(token)}`,
      portalFailedDeliveries: () => `${publicUrl}/portal/#/deliveries?status=failed`,
    },
    loginLimiter:
      overrides.loginLimiter ??
      (database.kind === 'postgresql'
        ? FlexibleLoginRateLimiter.inPostgres(limits(config), database.orm.em.getKnex())
        : FlexibleLoginRateLimiter.inMemory(limits(config))),
    endpointTestLimiter:
      database.kind === 'postgresql'
        ? FlexibleRateLimiter.inPostgres('endpoint-test', ENDPOINT_TESTS_PER_MINUTE, 60, database.orm.em.getKnex())
        : FlexibleRateLimiter.inMemory('endpoint-test', ENDPOINT_TESTS_PER_MINUTE, 60),
    requestLimiter:
      database.kind === 'postgresql'
        ? FlexibleRateLimiter.inPostgres(
            'account-requests',
            config.apiRateLimitPerAccount,
            1,
            database.orm.em.getKnex(),
          )
        : FlexibleRateLimiter.inMemory('account-requests', config.apiRateLimitPerAccount, 1),
    streamSlots:
      database.kind === 'postgresql'
        ? new PostgresStreamSlots(database.orm, STREAMS_PER_ACCOUNT)
        : new InMemoryStreamSlots(STREAMS_PER_ACCOUNT),
  };
  const signal = new WorkSignal();
  // On a server, committed work is announced to every process, this one included (its own NOTIFYs come back through
  // its listener: waking here as well would run every round twice). The embedded database has no listener.
  const announcer =
    database.kind === 'postgresql'
      ? workAnnouncer(
          notifyWork(database.orm),
          (err) =>
            log[failureLevel(err)]({ err }, 'work announcement failed; the workers look again within their idle delay'),
          { spacingMs: WAKE_UP_SPACING_MS },
        )
      : null;
  const metrics = createMetrics({ ...operationalStats(database.orm), statementsSent: () => database.statements.count });
  const reads = readReplicas(config, metrics, log);
  // Mails after the answer, each in a unit of work of its own (made when it runs: the units are built just below).
  const deferrer = createDeferrer((work) => unitOfWork().transaction(work), log);
  const unitOfWork: Services['unitOfWork'] = unitsOfWork(
    database.orm,
    { ...perProcess, deferrer } satisfies ProcessServices,
    {
      committed: (kinds) => (announcer ? announcer.announce(kinds) : signal.wake(kinds)),
      ...reads,
    },
  );

  let shuttingDown = false;
  const services: Services = {
    config,
    log,
    metrics,
    scrapeMetrics: overrides.scrapeMetrics ?? (() => metrics.registry.metrics()),
    unitOfWork,
    testClock,
    fairUse: createFairUse({
      share: config.apiRateLimitPerAccount,
      concurrency: config.apiConcurrencyPerAccount,
      counter: perProcess.requestLimiter,
      tokens: perProcess,
      metrics,
      log,
    }),
    ready: async () => !shuttingDown && (await database.ping()),
  };

  if (config.seedDemo && (await seedDemo(services, (script, clock) => new ScriptedWebhookSender(script, clock)))) {
    log.info('demo data loaded');
  }

  const answering =
    config.role === 'worker'
      ? workerHttpApp(services)
      : createHttpApp({
          router: appRouter,
          routes: routeTable,
          services,
          openApiDocument: buildOpenApiDocument(appRouter, routeTable),
        });
  // Traced around the whole listener (CONTRACT §13): the fair-use door answers before express.
  const app = config.tracing ? traceRequests(answering, documentedRoute(new Set(Object.keys(routeTable)))) : answering;
  const tasks =
    config.role === 'api'
      ? []
      : [
          // On a server, a lane's time is mostly round trips: a batch of 16 spends 0.9 ms of CPU per command against
          // 1.25 ms for 4 (a backlog of 3000, one worker, bench notes of issue 24). The embedded database's one
          // connection is shared with the requests: a short batch holds it for less.
          commandExecutor(services, {
            batch: database.kind === 'postgresql' ? 16 : 4,
            concurrency: database.kind === 'postgresql' ? 8 : 1,
            leaseMs: config.commandLeaseMs,
            maxAttempts: 3,
            retryDelayMs: 2000,
          }),
          commandResultPurge(services),
          deliveryPump(services, signal, {
            maxInFlight: config.webhookMaxInFlight,
            maxInFlightPerEndpoint: config.webhookMaxInFlightPerEndpoint,
            scheduleMs: config.webhookRetryScheduleMs,
            attemptMs: attemptMs(config),
            slowMs: config.webhookTimeoutMs / 2,
            leaseMs: 2 * attemptMs(config),
            disableAfterMs: config.webhookDisableAfterMs,
          }),
          eventRetentionPurge(services, config.eventRetentionDays),
          deliveryQueueSweep(services),
          eventSequencer(services),
        ];
  // On a server, work committed by other processes arrives as notifications; here, commits wake the signal directly.
  const wakeSource =
    database.kind === 'postgresql'
      ? () =>
          listenForWork(
            database.url,
            (kind) => signal.wake([kind]),
            (err) => log.warn({ err }, 'work listener: connection lost; reconnecting'),
          )
      : undefined;
  const worker = createWorker(tasks, log, signal, wakeSource);
  let workerStopped: Promise<void> | undefined;

  return {
    app,
    worker,
    services,
    database,
    /** Waits for work deferred past its answer (mails); tests use it to observe that work. */
    drainDeferred: () => deferrer.drain(),
    /**
     * Readiness turns 503 so that balancers stop sending; requests under way still finish. The worker stops taking
     * work at once and finishes (or gives back) what it holds, while the requests drain.
     */
    beginShutdown() {
      shuttingDown = true;
      workerStopped ??= worker.stop();
    },
    async close() {
      shuttingDown = true;
      await (workerStopped ??= worker.stop());
      await deferrer.drain();
      await (webhookSender as Partial<UndiciWebhookSender>).close?.();
      await announcer?.close();
      await reads.replicas?.close();
      if (!overrides.database) await database.close();
    },
  };
}

export type BuiltApp = Awaited<ReturnType<typeof buildApp>>;

/**
 * One attempt: a request within WEBHOOK_TIMEOUT_MS, and, only when a reused keep-alive connection dropped it before any
 * answer, one more at once on a new connection, within WEBHOOK_TIMEOUT_MS too; a second for the rest.
 */
const attemptMs = (config: Config) => 2 * config.webhookTimeoutMs + 1000;

/** CONTRACT §10: at most 10 endpoint tests a minute per account. */
const ENDPOINT_TESTS_PER_MINUTE = 10;
/** Legacy listings streaming at once per account (CONTRACT §1). */
const STREAMS_PER_ACCOUNT = 2;
/** At most one wake-up of a kind per this many ms from a busy process (the first of an idle spell goes at once). */
const WAKE_UP_SPACING_MS = 10;
const limits = (config: Config) => ({ perEmail: config.loginLimitPerEmail, perAddress: config.loginLimitPerAddress });

function chooseMailer(config: Config, log: Logger): Mailer {
  const inner = config.smtpUrl
    ? new SmtpMailer(config.smtpUrl, config.mailFrom)
    : new FileMailer(join(config.dataDir, 'mail'), config.mailFrom, (path) =>
        log.info({ path }, 'mail written (no SMTP_URL set)'),
      );
  return new RetryingMailer(inner, (err, attempt) =>
    log.warn({ err: { message: err.message }, attempt }, 'mail hand-over failed; retrying'),
  );
}
