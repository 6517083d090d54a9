import { DnsWebhookTargetPolicy } from '../adapters/webhooks/target-policy.ts';
import { openDatabase, type Database } from '../adapters/persistence/database.ts';
import { mikroOrmTransact } from '../adapters/persistence/unit-of-work.ts';
import { AdjustableClock, randomIds, systemClock } from '../adapters/system.ts';
import type { Clock, IdGenerator, WebhookTargetPolicy } from '../domain/ports.ts';
import { createHttpApp, healthRoutes } from './app.ts';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { appRouter } from './routers/index.ts';
import { seedDemo } from './seed-demo.ts';
import type { Services } from './services.ts';
import { createWorker } from './worker.ts';
import express from 'express';

export interface BuildOverrides {
  logger?: Logger;
  /** A database opened by the caller, who then also closes it (tests share one across apps). */
  database?: Database;
  clock?: Clock;
  ids?: IdGenerator;
  webhookTargets?: WebhookTargetPolicy;
}

/** The composition root: the one place that picks adapters and wires them to the core and the edge. */
export async function buildApp(config: Config, overrides: BuildOverrides = {}) {
  const log = overrides.logger ?? createLogger(config.logLevel);
  const database = overrides.database ?? (await openDatabase({ url: config.databaseUrl, pgliteDir: config.pgliteDir }));
  log.info({ database: database.kind }, 'database ready');

  const testClock = config.testClock ? new AdjustableClock() : null;
  const clock = overrides.clock ?? testClock ?? systemClock;
  const ids = overrides.ids ?? randomIds;
  const webhookTargets = overrides.webhookTargets ?? new DnsWebhookTargetPolicy(config.webhookAllowPrivateTargets);
  const transact = mikroOrmTransact(database.orm);

  let shuttingDown = false;
  const services: Services = {
    config,
    log,
    transact: (work) => transact((repositories) => work({ ...repositories, clock, ids, webhookTargets })),
    testClock,
    ready: async () => !shuttingDown && (await database.ping()),
  };

  if (config.seedDemo && (await seedDemo(services))) log.info('demo data loaded');

  const app = config.role === 'worker'
    ? express().use(healthRoutes(services))
    : createHttpApp({ router: appRouter, services, openApiDocument: buildOpenApiDocument(appRouter) });
  const worker = createWorker([], log);

  return {
    app,
    worker,
    services,
    database,
    /** Readiness turns 503 so that balancers stop sending; requests under way still finish. */
    beginShutdown() {
      shuttingDown = true;
    },
    async close() {
      shuttingDown = true;
      await worker.stop();
      if (!overrides.database) await database.close();
    },
  };
}

export type BuiltApp = Awaited<ReturnType<typeof buildApp>>;
