import type { Config } from './config.ts';

/** A line of the console: what it says to a person, and the same facts as fields for machines. */
export interface ConsoleLine {
  message: string;
  fields: Record<string, unknown>;
}

const ROLE_NAMES = { all: 'the API and the worker', api: 'the API', worker: 'the worker' } as const;

/** Where the data lives: the embedded database's folder, or a server's host, port and database (never its password). */
function databaseOf(config: Pick<Config, 'databaseUrl' | 'pgliteDir'>): {
  text: string;
  fields: Record<string, string>;
} {
  if (!config.databaseUrl) {
    return config.pgliteDir === 'memory://'
      ? {
          text: 'the embedded database, in memory (nothing is kept)',
          fields: { database: 'embedded', dataFolder: 'memory://' },
        }
      : {
          text: `the embedded database in ${config.pgliteDir}`,
          fields: { database: 'embedded', dataFolder: config.pgliteDir },
        };
  }
  const url = new URL(config.databaseUrl);
  const server = `${url.hostname || 'localhost'}:${url.port || '5432'}/${decodeURIComponent(url.pathname.slice(1)) || 'postgres'}`;
  return { text: `PostgreSQL at ${server}`, fields: { database: 'postgresql', server } };
}

/**
 * Where the embedded database is, and, when it stays where an earlier version's default made it, how to settle that;
 * nothing on a server. The start line says it, and so do tools that open the folder without it (npm run db:migrate).
 */
export function embeddedFolderLine(
  config: Pick<Config, 'databaseUrl' | 'pgliteDir' | 'pgliteDirOfOldDefault' | 'dataDir'>,
): string | undefined {
  if (config.databaseUrl) return undefined;
  const line = databaseOf(config).text;
  if (!config.pgliteDirOfOldDefault) return line;
  return (
    `${line}; it stays where earlier versions made it, not in DATA_DIR (${config.dataDir}): set PGLITE_DIR=${config.pgliteDir} ` +
    `to keep it there, or, with the service stopped, make the folder ${config.dataDir}/pglite (replacing any there)`
  );
}

/** The first line, before anything slow: what starts, on which database, and what an operator would miss. */
export function startLine(
  config: Pick<Config, 'role' | 'databaseUrl' | 'pgliteDir' | 'pgliteDirOfOldDefault' | 'dataDir' | 'adminToken'>,
): ConsoleLine {
  const database = databaseOf(config);
  const admin = config.adminToken
    ? ''
    : '; ADMIN_TOKEN is not set, so admin calls are refused (set it, 16 characters or more, to enable them)';
  return {
    message: `starting ${ROLE_NAMES[config.role]} on ${embeddedFolderLine(config) ?? database.text}${admin}`,
    fields: {
      role: config.role,
      ...database.fields,
      ...(config.pgliteDirOfOldDefault && { dataFolderOf: 'an earlier default' }),
      ...(!config.adminToken && { adminToken: 'not set' }),
    },
  };
}

/**
 * The line that says the service serves, naming where. `port` and `role` lead its fields: scripts and tests find the
 * port there (`"port":N,"role"`).
 */
export function readyLine(
  config: Pick<Config, 'role'>,
  port: number,
  cluster?: { api: number; connectionsEach: number },
): ConsoleLine {
  const url = `http://localhost:${port}`;
  if (cluster) {
    // A cluster's primary (server/processes/primary.ts): its processes, and the database connections they may hold.
    const processes = cluster.api + 1;
    const connections = processes * cluster.connectionsEach;
    return {
      message:
        `${readyLine({ role: 'all' }, port).message}; ${cluster.api} API processes and a worker, ` +
        `at most ${connections} database connections (${cluster.connectionsEach} each)`,
      fields: {
        port,
        role: config.role,
        url,
        portal: `${url}/portal`,
        docs: `${url}/docs`,
        processes,
        databaseConnections: connections,
      },
    };
  }
  if (config.role === 'worker') {
    return { message: `ready: the worker runs; health at ${url}/readyz`, fields: { port, role: config.role, url } };
  }
  return {
    message: `ready: ${url} (integrator portal: ${url}/portal, API reference: ${url}/docs)`,
    fields: { port, role: config.role, url, portal: `${url}/portal`, docs: `${url}/docs` },
  };
}
