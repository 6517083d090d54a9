import type { RequestHandler } from 'express';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { routeOf } from './http/route-of.ts';

/** What the queue and pool gauges read (the persistence adapter's operational stats). */
export interface StatsSource {
  queues(): Promise<QueueStats>;
  pool(): { used: number; free: number; pending: number; max: number };
  /** Statements this process has sent to the database so far (round trips). */
  statementsSent(): number;
}

export interface QueueStats {
  commands: { accepted: number; running: number; oldestAcceptedAgeSeconds: number };
  deliveries: { pending: number; oldestPendingAgeSeconds: number };
  endpoints: { failing: number; disabledFailing: number; disabledIntegrator: number };
}

const STATS_FRESH_MS = 2000;
/** A scrape never waits longer than this for the queue statistics (the embedded database has one connection). */
const STATS_TIMEOUT_MS = 2000;

/**
 * This process's metrics in Prometheus' text format (prom-client), one registry per process: every `api` and `worker`
 * process reports its own counters; the queue gauges read the shared database and are the same everywhere. In a
 * cluster (server/processes/primary.ts) the processes' metrics are added up, but for the gauges of the shared queues,
 * which every process reads alike: their largest value (`queue_stats_up`: the smallest).
 */
export function createMetrics(stats: StatsSource) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 }); // event-loop lag, heap, GC, CPU
  const registers = [registry];

  // Several gauges read one statement's answer: read it once per scrape. A failed or slow read never fails the scrape
  // (the process's own metrics matter most when the database is away): the gauges keep their last values and
  // `queue_stats_up` says 0.
  let cached: { at: number; value: Promise<QueueStats | null> } | null = null;
  new Gauge({
    name: 'queue_stats_up',
    help: 'Whether the last read of the queue statistics succeeded within 2 s.',
    registers: [registry],
    aggregator: 'min',
    async collect() {
      this.set((await queues()) ? 1 : 0);
    },
  });
  const queues = () => {
    if (!cached || Date.now() - cached.at > STATS_FRESH_MS) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), STATS_TIMEOUT_MS);
      });
      const read = stats.queues().catch(() => null);
      const value = Promise.race([read, timeout]).then((answer) => {
        clearTimeout(timer);
        return answer;
      });
      cached = { at: Date.now(), value };
    }
    return cached.value;
  };

  const metrics = {
    registry,
    readsServed: new Counter({
      name: 'db_reads_total',
      help: 'Reads a read replica may answer (CONTRACT §12), by the database that answered: primary, or a replica.',
      labelNames: ['database'],
      registers,
    }),
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    accountLaneWaiting: new Gauge({
      name: 'account_lane_waiting_requests',
      help: "Requests waiting for their account's turn in this process (API_CONCURRENCY_PER_ACCOUNT, or the pace of an account past its share).",
      registers,
    }),
    commandsExecuted: new Counter({
      name: 'commands_executed_total',
      help: 'Brand command executions by this process, by outcome (succeeded, failed, lost, retry, gave_up).',
      labelNames: ['outcome'],
      registers,
    }),
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by this process, by outcome (delivered, retry_scheduled, failed).',
      labelNames: ['outcome'],
      registers,
    }),
    deliveryLag: new Histogram({
      name: 'webhook_delivery_lag_seconds',
      help: "From the change that made an event to its endpoint's 2xx (a redelivery counts from the same change).",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600],
      registers,
    }),
  };
  new Gauge({
    name: 'commands',
    help: 'Brand commands by state: accepted (waiting for an executor), running (held by an executor now); finished ones are commands_executed_total.',
    labelNames: ['state'],
    registers,
    aggregator: 'max',
    async collect() {
      const read = await queues();
      if (read) for (const state of ['accepted', 'running'] as const) this.set({ state }, read.commands[state]);
    },
  });
  new Gauge({
    name: 'commands_oldest_accepted_age_seconds',
    help: 'Age of the oldest command waiting for the executor (0: none).',
    registers,
    aggregator: 'max',
    async collect() {
      const read = await queues();
      if (read) this.set(read.commands.oldestAcceptedAgeSeconds);
    },
  });
  new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Deliveries waiting to be sent or retried.',
    registers,
    aggregator: 'max',
    async collect() {
      const read = await queues();
      if (read) this.set(read.deliveries.pending);
    },
  });
  new Gauge({
    name: 'webhook_deliveries_oldest_pending_age_seconds',
    help: 'How long the most overdue sendable delivery has been due (0: none).',
    registers,
    aggregator: 'max',
    async collect() {
      const read = await queues();
      if (read) this.set(read.deliveries.oldestPendingAgeSeconds);
    },
  });
  new Gauge({
    name: 'webhook_endpoints_failing',
    help: 'Enabled endpoints whose last attempts got no 2xx (CONTRACT §11: failingSince set).',
    registers,
    aggregator: 'max',
    async collect() {
      const read = await queues();
      if (read) this.set(read.endpoints.failing);
    },
  });
  new Gauge({
    name: 'webhook_endpoints_disabled',
    help: 'Disabled endpoints, by reason: failing (for WEBHOOK_DISABLE_AFTER), integrator (PUT enabled false).',
    labelNames: ['reason'],
    registers,
    aggregator: 'max',
    async collect() {
      const read = await queues();
      if (read) {
        this.set({ reason: 'failing' }, read.endpoints.disabledFailing);
        this.set({ reason: 'integrator' }, read.endpoints.disabledIntegrator);
      }
    },
  });
  let counted = 0;
  new Counter({
    name: 'db_statements_total',
    help: 'Statements this process has sent to the database: its round trips.',
    registers,
    collect() {
      const sent = stats.statementsSent();
      this.inc(sent - counted);
      counted = sent;
    },
  });
  new Gauge({
    name: 'db_pool_connections',
    help: "This process's database connections: used, free, waited for (pending), and the maximum.",
    labelNames: ['state'],
    registers,
    collect() {
      const pool = stats.pool();
      for (const state of ['used', 'free', 'pending', 'max'] as const) this.set({ state }, pool[state]);
    },
  });
  metrics.readsServed.inc({ database: 'primary' }, 0); // shown from the start, as 0
  return { ...metrics, watchReplicas: (views: () => ReplicaView[]) => replicaGauges(registers, views) };
}

/** A read replica as the gauges show it (adapters/persistence/replicas/replica-set.ts). */
interface ReplicaView {
  name: string;
  lagMs: number | null;
  usable: boolean;
}

/** Each read replica's lag (CONTRACT §12) and whether reads go to it; in a cluster the worst process's view. */
function replicaGauges(registers: Registry[], views: () => ReplicaView[]) {
  new Gauge({
    name: 'db_replica_lag_seconds',
    help: "How far a read replica's answers may be behind the primary (measured against the primary's WAL position).",
    labelNames: ['replica'],
    registers,
    aggregator: 'max',
    collect() {
      for (const view of views()) if (view.lagMs !== null) this.set({ replica: view.name }, view.lagMs / 1000);
    },
  });
  new Gauge({
    name: 'db_replica_up',
    help: 'Whether reads go to a read replica now: it answers, within REPLICA_MAX_LAG_MS of the primary.',
    labelNames: ['replica'],
    registers,
    aggregator: 'min',
    collect() {
      for (const view of views()) this.set({ replica: view.name }, view.usable ? 1 : 0);
    },
  });
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Counts every answer by method, route (http/route-of.ts) and status. */
export function httpMetrics(metrics: Metrics, procedures: ReadonlySet<string>): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      countAnswer(
        metrics,
        { method: req.method, route: routeOf(req.route?.path, req.originalUrl, procedures), status: res.statusCode },
        started,
      );
    });
    next();
  };
}

/** Counts one answer, and the time since `started` (process.hrtime.bigint()). */
export function countAnswer(
  metrics: Metrics,
  answer: { method: string; route: string; status: number },
  started: bigint,
) {
  const labels = { method: answer.method, route: answer.route, status: String(answer.status) };
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
}
