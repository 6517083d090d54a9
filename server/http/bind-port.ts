import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError } from '../config.ts';
import { problem, trpcFailure } from '../errors.ts';
import { trpcProcedureOf } from './faces.ts';
import { requestIdFor } from './request-id.ts';

export interface RequestTimeouts {
  /** The request line and headers must arrive within this. */
  headersMs: number;
  /** The whole request, its body included, must arrive within this. */
  requestMs: number;
}

/** 10 s for the headers, 30 s for the whole request (a body is 1 MiB at most): docs/operators.md. */
export const REQUEST_TIMEOUTS: RequestTimeouts = { headersMs: 10_000, requestMs: 30_000 };

/** How soon a caller turned away while the process starts should come back. */
const STARTING_RETRY_AFTER_S = 2;

export interface BoundPort {
  server: Server;
  /** The port bound (PORT 0 picks one). */
  port: number;
  /** Hands every request from now on to the built app. */
  serve(app: RequestListener): void;
  /**
   * Closes the connections that carry no request: kept-alive ones between requests (Node's closeIdleConnections) and
   * ones that never sent a byte, which Node counts as busy (a client's pool opens them ahead of its requests).
   */
  closeIdle(): void;
}

/**
 * Binds PORT before anything else starts: a port that cannot be had stops the process (a ConfigError naming PORT)
 * before it opens the database or claims any work, which another process would otherwise wait a lease for. Until
 * `serve` is called, every request is answered at once: /healthz 200 (the process lives), /readyz 503, anything
 * else 503 problem+json with Retry-After. `traced`: tracing is on (the app given to `serve` is traced already).
 */
export async function bindPort(
  port: number,
  timeouts: RequestTimeouts = REQUEST_TIMEOUTS,
  { traced = false } = {},
): Promise<BoundPort> {
  // A span for each starting answer too, with tracing on (CONTRACT §13: every request); its module loads only then.
  let handler: RequestListener = traced
    ? (await import('./trace-requests.ts')).traceRequests(starting, healthRouteOf)
    : starting;
  // How long a client may take to send a request: a slow or stalled sender holds a socket no longer than this (408,
  // closed). Checked every second, not Node's default 30 s. Answers are not bounded by it (a legacy listing streams
  // on).
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
    },
    (req, res) => handler(req, res),
  );
  server.keepAliveTimeout = 65_000;
  // Node's headersTimeout starts at a request's first byte: a connection that sends nothing would be held for ever. It
  // gets as long as an idle kept-alive one (a balancer's pool opens some ahead of its requests, and uses them late).
  const silent = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    silent.add(socket);
    const timer = setTimeout(() => {
      silent.delete(socket);
      if (socket.bytesRead === 0) socket.destroy();
    }, server.keepAliveTimeout).unref();
    socket.once('close', () => {
      clearTimeout(timer);
      silent.delete(socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: NodeJS.ErrnoException) => {
    throw refusal(error, port) ?? error;
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    serve: (app) => {
      handler = app;
    },
    closeIdle: () => {
      server.closeIdleConnections();
      for (const socket of silent) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}

const HEALTH_ROUTES = new Set(['/healthz', '/readyz']);
/** The routes a starting process knows: the code that knows the others is still loading. */
const healthRouteOf = (req: IncomingMessage) => {
  const path = (req.url ?? '/').split('?')[0]!;
  return HEALTH_ROUTES.has(path) ? path : undefined;
};

const starting: RequestListener = (req, res) => {
  const path = (req.url ?? '/').split('?')[0]!;
  if (HEALTH_ROUTES.has(path)) {
    res.writeHead(path === '/healthz' ? 200 : 503, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ status: path === '/healthz' ? 'ok' : 'starting' }));
    return;
  }
  const requestId = requestIdFor(req, res);
  const message = 'The service is starting; try again in a moment.';
  // Each face in its own voice: tRPC's shape on /trpc, a problem everywhere else.
  const trpc = trpcProcedureOf(path);
  res.writeHead(503, {
    'content-type': trpc === null ? 'application/problem+json' : 'application/json',
    'retry-after': String(STARTING_RETRY_AFTER_S),
  });
  res.end(
    JSON.stringify(
      trpc === null
        ? problem('SERVICE_UNAVAILABLE', 503, message, { requestId })
        : trpcFailure(trpc, 503, 'SERVICE_UNAVAILABLE', message, { requestId }),
    ),
  );
};

function refusal(error: NodeJS.ErrnoException, port: number): ConfigError | null {
  if (error.code === 'EADDRINUSE')
    return new ConfigError(`PORT ${port} is in use by another process: stop it, or set PORT to a free port.`);
  if (error.code === 'EACCES') {
    return new ConfigError(
      `PORT ${port} may not be bound by this user (ports below 1024 need a privilege): set PORT to 1024 or above, ` +
        'or grant the process CAP_NET_BIND_SERVICE.',
    );
  }
  return null;
}
