import { ReplicaSet } from '../adapters/persistence/replicas/replica-set.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

/**
 * The read replicas of CONTRACT §12, for a process that serves HTTP on a server with DATABASE_REPLICA_URL set (a worker
 * answers none of those reads): watched from the start, their lag and the reads each database served on /metrics.
 */
export function openReadReplicas(config: Config, metrics: Metrics, log: Logger): ReplicaSet | undefined {
  if (!config.databaseUrl || config.databaseReplicaUrls.length === 0 || config.role === 'worker') return undefined;
  const replicas = new ReplicaSet(config.databaseUrl, config.databaseReplicaUrls, {
    maxLagMs: config.replicaMaxLagMs,
    poolSize: config.databasePoolSize,
    served: (database) => metrics.readsServed.inc({ database }),
    told: (message, fields) => log.warn(fields, message),
  });
  metrics.watchReplicas(() => replicas.views());
  replicas.start();
  log.info(
    { replicas: replicas.views().map((r) => r.name), maxLagMs: config.replicaMaxLagMs },
    `read replicas: ${config.databaseReplicaUrls.length}, read within ${config.replicaMaxLagMs} ms of the primary`,
  );
  return replicas;
}
