import { ReplicaSet } from '../adapters/persistence/replicas/replica-set.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

/**
 * Where the units of work send the reads of CONTRACT §12, and the count of them by database on /metrics: the read
 * replicas, for a process that serves HTTP on a server with DATABASE_REPLICA_URL set (a worker answers none of those
 * reads), watched from the start; else the primary alone.
 */
export function readReplicas(
  config: Config,
  metrics: Metrics,
  log: Logger,
): { replicas?: ReplicaSet; served: (database: string) => void } {
  const served = (database: string) => metrics.readsServed.inc({ database });
  if (!config.databaseUrl || config.databaseReplicaUrls.length === 0 || config.role === 'worker') return { served };
  const replicas = new ReplicaSet(config.databaseUrl, config.databaseReplicaUrls, {
    maxLagMs: config.replicaMaxLagMs,
    poolSize: config.databasePoolSize,
    served,
    told: (message, fields) => log.warn(fields, message),
  });
  metrics.watchReplicas(() => replicas.views());
  replicas.start();
  log.info(
    { replicas: replicas.views().map((r) => r.name), maxLagMs: config.replicaMaxLagMs },
    `read replicas: ${config.databaseReplicaUrls.length}, read within ${config.replicaMaxLagMs} ms of the primary`,
  );
  return { replicas, served };
}
