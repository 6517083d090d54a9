import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { duration, flag, int, postgresUrl, schedule } from './config-values.ts';

/** Where the service keeps what it writes (DATA_DIR's default): the generated key, mails, the embedded database. */
export const DEFAULT_DATA_DIR = './.data';

const envSchema = z.object({
  SERVICE_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  PORT: int(0, 65535, 3000),
  WEB_CONCURRENCY: z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .optional()
    .transform((v) => (v === undefined ? null : Number(v)))
    .pipe(z.number().int().min(1, 'must be 1 or more').max(1024).nullable()),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_REPLICA_URL: z // one or more, separated by commas (CONTRACT §12)
    .string()
    .transform((v) => v.split(',').map((url) => url.trim()))
    .pipe(z.array(postgresUrl))
    .optional(),
  REPLICA_MAX_LAG_MS: int(0, 3_600_000, 2000),
  DATABASE_POOL_SIZE: int(1, 1000, 20),
  DATABASE_TIMEOUT_MS: int(0, 3_600_000, 10_000),
  PGLITE_DIR: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  JWT_SECRET: z
    .string()
    .refine((v) => Buffer.byteLength(v) >= 32, 'must be at least 32 bytes')
    .optional(),
  JWT_SECRET_PREVIOUS: z
    .string()
    .refine((v) => Buffer.byteLength(v) >= 32, 'must be at least 32 bytes')
    .optional(),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('no-reply@localhost'),
  WEBHOOK_RETRY_SCHEDULE: schedule,
  WEBHOOK_TIMEOUT_MS: int(1, 600_000, 10_000),
  WEBHOOK_DISABLE_AFTER: duration('5d'),
  COMMAND_LEASE_MS: int(100, 3_600_000, 60_000),
  SHUTDOWN_DELAY_MS: int(0, 60_000, 0),
  WEBHOOK_MAX_IN_FLIGHT: int(1, 10_000, 64),
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: int(1, 10_000, 4),
  EVENT_RETENTION_DAYS: int(1, 3650, 30),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag,
  LOGIN_LIMIT_PER_EMAIL: int(1, 100_000, 5),
  LOGIN_LIMIT_PER_ADDRESS: int(1, 100_000, 30),
  API_RATE_LIMIT_PER_ACCOUNT: int(1, 1_000_000, 50),
  API_CONCURRENCY_PER_ACCOUNT: int(1, 10_000, 4),
  LISTING_STALL_TIMEOUT_MS: int(100, 3_600_000, 30_000),
  TEST_CLOCK: flag,
  TEST_EMBEDDED_DROP_IDLE_MS: int(0, 86_400_000, 0),
  SEED_DEMO: flag,
  TRUST_PROXY: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['pretty', 'json'], 'must be pretty (lines for people) or json (a JSON object a line)').optional(),
});

export interface Config {
  role: 'all' | 'api' | 'worker';
  port: number;
  /**
   * API processes of one start on PostgreSQL (SERVICE_ROLE=all; server/processes/layout.ts): 1 keeps one `all` process;
   * more fork that many API processes sharing the port, beside one worker process. Null when not set: the CPUs.
   */
  webConcurrency: number | null;
  databaseUrl: string | undefined;
  /** Streaming replicas that may answer the reads of CONTRACT §12 within `replicaMaxLagMs` (none: the primary). */
  databaseReplicaUrls: string[];
  replicaMaxLagMs: number;
  /** Connections to the PostgreSQL server per process. */
  databasePoolSize: number;
  /**
   * The longest a statement may run, a request may wait for a pooled connection, or an answer may take to arrive
   * (a server that stopped answering): past it the request fails with 503 instead of hanging.
   */
  databaseTimeoutMs: number;
  /** The embedded database's folder: PGLITE_DIR, else `pglite` in DATA_DIR (see `embeddedFolder`). */
  pgliteDir: string;
  /** The embedded database stays where an earlier version's default put it (./.data/pglite): the start line says so. */
  pgliteDirOfOldDefault: boolean;
  dataDir: string;
  /** The address integrators reach the service at, for the links of the mails; unset: http://localhost:<port>. */
  publicUrl: string | undefined;
  jwtSecret: string | undefined;
  /** The key before the last rotation: still accepted when verifying tokens, never used to sign. */
  jwtSecretPrevious: string | undefined;
  adminToken: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  /** How long an endpoint may fail before a delivery that fails disables it (CONTRACT §11). */
  webhookDisableAfterMs: number;
  /** How long an executor's claim on a command holds; a dead executor's commands run again after it. */
  commandLeaseMs: number;
  /**
   * On SIGTERM, how long the process goes on serving with /readyz at 503 before it closes its listener: the time a
   * load balancer takes to notice and stop sending it requests.
   */
  shutdownDelayMs: number;
  /** Deliveries being sent at once by one process. */
  webhookMaxInFlight: number;
  /** Of those, to one endpoint (CONTRACT §7): a silent endpoint holds no more of the process's sends. */
  webhookMaxInFlightPerEndpoint: number;
  /** How long events, deliveries and their attempts are kept. */
  eventRetentionDays: number;
  webhookAllowPrivateTargets: boolean;
  loginLimitPerEmail: number;
  loginLimitPerAddress: number;
  /** Authenticated requests a second per account (CONTRACT §1). */
  apiRateLimitPerAccount: number;
  /** Requests of one account this process works on at once; its others wait their turn (server/pipeline/lanes.ts). */
  apiConcurrencyPerAccount: number;
  /** How long a legacy listing waits for a client that stopped reading before it drops the connection. */
  listingStallTimeoutMs: number;
  testClock: boolean;
  /** Test-only: the embedded database drops connections idle this long (0: never), to exercise reconnection. */
  testEmbeddedDropIdleMs: number;
  seedDemo: boolean;
  /** express's `trust proxy`: which hops may set X-Forwarded-For (client addresses for rate limits). */
  trustProxy: boolean | number | string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Lines for people (a terminal's default) or JSON lines (the default anywhere else: files, collectors). */
  logFormat: LogFormat;
  /** OpenTelemetry's own settings name an OTLP endpoint for traces (CONTRACT §13): the process exports them. */
  tracing: boolean;
}

export type LogFormat = 'pretty' | 'json';

export class ConfigError extends Error {}

/** Reads the environment once; every problem is reported with the name of its setting. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  stdoutIsTerminal = Boolean(process.stdout.isTTY),
): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid settings:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  if (e.SERVICE_ROLE !== 'all' && !e.DATABASE_URL)
    throw new ConfigError(
      `Invalid settings:\n  SERVICE_ROLE: "${e.SERVICE_ROLE}" needs DATABASE_URL; the embedded database serves one process, so run SERVICE_ROLE=all without a server`,
    );
  if (e.DATABASE_REPLICA_URL && !e.DATABASE_URL)
    throw new ConfigError(
      'DATABASE_REPLICA_URL: the embedded database has no replicas; set DATABASE_URL to the primary',
    );
  return {
    role: e.SERVICE_ROLE,
    port: e.PORT,
    webConcurrency: e.WEB_CONCURRENCY,
    databaseUrl: e.DATABASE_URL,
    databaseReplicaUrls: e.DATABASE_REPLICA_URL ?? [],
    replicaMaxLagMs: e.REPLICA_MAX_LAG_MS,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseTimeoutMs: e.DATABASE_TIMEOUT_MS,
    ...embeddedFolder(e.PGLITE_DIR, e.DATA_DIR, Boolean(e.DATABASE_URL)),
    dataDir: resolve(e.DATA_DIR),
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    jwtSecret: e.JWT_SECRET,
    jwtSecretPrevious: e.JWT_SECRET_PREVIOUS,
    adminToken: e.ADMIN_TOKEN,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookDisableAfterMs: e.WEBHOOK_DISABLE_AFTER,
    commandLeaseMs: e.COMMAND_LEASE_MS,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    webhookMaxInFlight: e.WEBHOOK_MAX_IN_FLIGHT,
    webhookMaxInFlightPerEndpoint: e.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT,
    eventRetentionDays: e.EVENT_RETENTION_DAYS,
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    loginLimitPerEmail: e.LOGIN_LIMIT_PER_EMAIL,
    loginLimitPerAddress: e.LOGIN_LIMIT_PER_ADDRESS,
    apiRateLimitPerAccount: e.API_RATE_LIMIT_PER_ACCOUNT,
    apiConcurrencyPerAccount: e.API_CONCURRENCY_PER_ACCOUNT,
    listingStallTimeoutMs: e.LISTING_STALL_TIMEOUT_MS,
    testClock: e.TEST_CLOCK,
    testEmbeddedDropIdleMs: e.TEST_EMBEDDED_DROP_IDLE_MS,
    seedDemo: e.SEED_DEMO,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT ?? (stdoutIsTerminal ? 'pretty' : 'json'),
    tracing: tracingOf(env),
  };
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  return /^\d+$/.test(value) ? Number(value) : value;
}

const OLD_DEFAULT = './.data/pglite';

/**
 * PGLITE_DIR, else the folder `pglite` in DATA_DIR, so that DATA_DIR moves everything the service keeps. Until
 * 2026-11-27 the default was ./.data/pglite (in the working directory) whatever DATA_DIR said. A deployment of then has
 * a DATA_DIR with files in it (the generated key, mails) and its database in ./.data/pglite: that database is kept
 * rather than a new empty one made beside the rest, and the start line says how to settle it. A DATA_DIR not made yet,
 * or empty, is a new place: its own database, whatever ./.data holds.
 */
function embeddedFolder(
  pgliteDir: string | undefined,
  dataDir: string,
  onServer: boolean,
): Pick<Config, 'pgliteDir' | 'pgliteDirOfOldDefault'> {
  if (pgliteDir)
    return { pgliteDir: pgliteDir === 'memory://' ? pgliteDir : resolve(pgliteDir), pgliteDirOfOldDefault: false };
  const inDataDir = resolve(dataDir, 'pglite');
  const old = resolve(OLD_DEFAULT);
  // On a server the folder is unused: nothing to look for.
  const kept =
    !onServer &&
    inDataDir !== old &&
    !existsSync(join(inDataDir, 'PG_VERSION')) &&
    existsSync(join(old, 'PG_VERSION')) &&
    holdsFiles(resolve(dataDir));
  return { pgliteDir: kept ? old : inDataDir, pgliteDirOfOldDefault: kept };
}

/**
 * Whether DATA_DIR holds what a deployment writes (the generated key, mails); the embedded database's own folder, lock
 * and creation marker are left out: a first start interrupted while it created them is still a new place.
 */
function holdsFiles(dir: string): boolean {
  try {
    return readdirSync(dir).some((entry) => !['pglite', 'pglite.lock', 'pglite.creating'].includes(entry));
  } catch {
    return false; // not made yet
  }
}

/** CONTRACT §13: traces over OTLP/HTTP when OpenTelemetry's settings name an endpoint for them (read by its SDK). */
function tracingOf(env: NodeJS.ProcessEnv): boolean {
  // As the SDK reads them: the traces' own setting first, blanks ignored.
  const set = (name: string) => env[name]?.trim() || undefined;
  const inEffect = (what: 'PROTOCOL' | 'ENDPOINT') =>
    set(`OTEL_EXPORTER_OTLP_TRACES_${what}`) ? `OTEL_EXPORTER_OTLP_TRACES_${what}` : `OTEL_EXPORTER_OTLP_${what}`;
  const protocolName = inEffect('PROTOCOL');
  const protocol = set(protocolName);
  if (protocol && protocol !== 'http/protobuf' && protocol !== 'http/json')
    throw new ConfigError(`${protocolName}: traces go over OTLP/HTTP: http/protobuf or http/json, not ${protocol}`);
  // The one the SDK uses for traces. It would take `collector:4318` for a URL of scheme `collector:`, and send nothing.
  const name = inEffect('ENDPOINT');
  const endpoint = set(name);
  if (endpoint && !(URL.canParse(endpoint) && /^https?:$/.test(new URL(endpoint).protocol)))
    // Not echoed: `user:token@collector` reads as a scheme, and the log is no place for it.
    throw new ConfigError(`${name}: an http:// or https:// URL (such as http://127.0.0.1:4318), with its scheme`);
  return Boolean(endpoint);
}
