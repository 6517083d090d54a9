import type { RequestListener } from 'node:http';
import type { TRPCError } from '@trpc/server';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express from 'express';
import { pinoHttp } from 'pino-http';
import swaggerUi from 'swagger-ui-express';
import { createOpenApiExpressMiddleware, type OpenAPIObject, type OpenApiRouter } from 'trpc-to-openapi';
import { isUnavailable } from '../../domain/errors.ts';
import { type Context, contextFactory } from '../context.ts';
import { problem, retryAfterOf, tokenAccepted } from '../errors.ts';
import { type Logger, safeError } from '../logger.ts';
import { httpMetrics } from '../metrics.ts';
import { adminRefusal, bearerChallenge, isAdmin } from '../pipeline/credentials.ts';
import {
  bodilessIsEmptyJson,
  jsonBodiesOnly,
  MAX_BODY_BYTES,
  refuseDeclaredTooLarge,
  restJsonBodies,
  trpcBodies,
} from '../pipeline/json-body.ts';
import type { RouteTable } from '../routers/contracts.ts';
import type { Services } from '../services.ts';
import { AMBIGUOUS_PATH, isAmbiguousPath } from './ambiguous-path.ts';
import { edgeErrors } from './edge-errors.ts';
import { eventsFeedRoute } from './events-feed.ts';
import { faviconRoute } from './favicon.ts';
import { legacyOrdersRoute } from './legacy-orders.ts';
import { portalRoutes } from './portal.ts';
import { requestIdFor } from './request-id.ts';
import { logInRequestSpan } from './request-traces.ts';
import { documentedOperations, undocumentedRoute } from './rest-routes.ts';
import { jsonMediaTypeInLowerCase } from './trpc-to-openapi-workarounds.ts';

export interface HttpAppOptions {
  /** The app router; tests may hand in a router that adds procedures of their own. */
  router: OpenApiRouter;
  /** The router's routes by procedure path (server/routers/contracts.ts); a test's router comes with its own. */
  routes: RouteTable;
  services: Services;
  openApiDocument: OpenAPIObject;
}

/**
 * Answer statuses and headers that only the REST face sets: a procedure's own success status (202 for accepted
 * commands), 204 without a body when it answers null, problem+json (with Retry-After) for failures.
 */
const restResponseMeta = (routes: RouteTable) => {
  const success = new Map(Object.entries(routes).map(([path, { meta }]) => [path, meta.rest?.status ?? 200]));
  return ({
    errors,
    paths,
    data,
    ctx,
  }: {
    errors: TRPCError[];
    paths?: readonly string[];
    data?: readonly unknown[];
    ctx?: Context;
  }) => {
    const error = errors[0];
    if (!error) return { status: data?.[0] === null ? 204 : (success.get(paths?.[0] ?? '') ?? 200) };
    return problemMeta(error, ctx);
  };
};

function problemMeta(error: TRPCError, ctx: Context | undefined) {
  const retryAfter = retryAfterOf(error);
  return {
    ...((error.code as string) === 'GONE' && { status: 410 }),
    headers: {
      'content-type': 'application/problem+json',
      ...(retryAfter !== undefined && { 'retry-after': String(Math.max(1, Math.ceil(retryAfter))) }),
      ...(error.code === 'UNAUTHORIZED' && {
        'www-authenticate': bearerChallenge(ctx?.authorization, tokenAccepted(error)),
      }),
    },
  };
}

/** This process's metrics in Prometheus' text format, behind the admin token; served by every role. */
export function metricsRoute(services: Services) {
  const routes = express.Router();
  routes.get('/metrics', async (req, res) => {
    const { adminToken } = services.config;
    if (!isAdmin(req.headers.authorization, adminToken)) {
      res
        .status(401)
        .type('application/problem+json')
        .setHeader('www-authenticate', bearerChallenge(req.headers.authorization));
      res.send(
        JSON.stringify(
          problem('UNAUTHORIZED', 401, adminRefusal(adminToken), {
            requestId: String(req.id ?? requestIdFor(req, res)),
          }),
        ),
      );
      return;
    }
    res.type(services.metrics.registry.contentType).send(await services.scrapeMetrics());
  });
  return routes;
}

/** Liveness and readiness, served by every role. */
export function healthRoutes(services: Services) {
  const routes = express.Router();
  routes.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  routes.get('/readyz', async (_req, res) => {
    const ready = await services.ready();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable' });
  });
  return routes;
}

/** A worker's port: health and metrics, nothing else. */
export function workerHttpApp(services: Services): RequestListener {
  return express()
    .disable('x-powered-by')
    .use(healthRoutes(services))
    .use(metricsRoute(services))
    .use(undocumentedRoute([]));
}

/** A path the WHATWG parser would read otherwise (ambiguous-path.ts) is answered 404 here, with the request id. */
const unambiguousPath: express.RequestHandler = (req, res, next) => {
  if (!isAmbiguousPath(req.path)) return next();
  res
    .status(404)
    .type('application/problem+json')
    .send(JSON.stringify(problem('NOT_FOUND', 404, AMBIGUOUS_PATH, { requestId: String(req.id) })));
};

/** The REST face, `/trpc`, health, metrics and docs, behind the fair-use door (server/pipeline/door.ts). */
export function createHttpApp({ router, routes, services, openApiDocument }: HttpAppOptions): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', services.config.trustProxy);
  app.set('etag', false);

  const operations = documentedOperations(openApiDocument);
  app.use(httpMetrics(services.metrics, new Set(Object.keys(routes))));
  app.use(
    pinoHttp({
      logger: services.log,
      genReqId: requestIdFor,
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
      // A 503 is the database away, an operational state said once as a warning (logFailure): not an error of ours.
      customLogLevel: (_req, res, err) =>
        res.statusCode === 503 ? 'warn' : err || res.statusCode >= 500 ? 'error' : 'info',
      serializers: {
        // Path only: queries and headers may carry what must not be logged.
        req: (req: { id: unknown; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          path: req.url.split('?')[0],
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        // pino-http puts its own in front of the logger's for the request's lines: it hands over pino's, with the error
        // as `raw`.
        err: (err: { raw?: unknown }) => safeError(err.raw ?? err),
      },
    }),
  );

  if (services.config.tracing) app.use(logInRequestSpan);
  app.use(refuseDeclaredTooLarge);
  app.use(['/v3', '/trpc'], privateAnswers);
  app.use(healthRoutes(services));
  app.use(metricsRoute(services));

  app.use(
    '/trpc',
    ...trpcBodies(),
    createExpressMiddleware({
      router,
      createContext: contextFactory(services, 'trpc'),
      // A 429 says when to come back on this face too (CONTRACT §1); the seconds are also in the error's data. A 401,
      // of any call of a batch, challenges as REST does.
      responseMeta: ({ errors, ctx }) => {
        const wait = errors.map(retryAfterOf).find((seconds) => seconds !== undefined);
        const unauthorized = errors.filter((error) => error.code === 'UNAUTHORIZED');
        return {
          headers: {
            ...(wait !== undefined && { 'retry-after': String(Math.max(1, Math.ceil(wait))) }),
            ...(unauthorized.length > 0 && {
              'www-authenticate': bearerChallenge(ctx?.authorization, unauthorized.every(tokenAccepted)),
            }),
          },
        };
      },
      maxBodySize: MAX_BODY_BYTES,
      onError: ({ error, ctx, path }) => logFailure(ctx?.log ?? services.log, error, path),
    }),
  );

  app.get('/', (_req, res) => {
    res.redirect(302, '/docs');
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  app.get('/favicon.ico', faviconRoute());
  app.use(portalRoutes({ localMail: services.config.smtpUrl === undefined }));
  // The reference may not be framed by another site (clickjacking), as the portal may not (server/http/portal.ts).
  app.use(
    '/docs',
    notFramed,
    swaggerUi.serve,
    swaggerUi.setup(undefined, {
      customSiteTitle: 'Partner and Brand Integration API',
      swaggerOptions: { url: '/openapi.json' },
    }),
  );

  const undocumented = undocumentedRoute(operations);
  // HEAD and OPTIONS are not operations of this API (express would run a GET for a HEAD, a whole listing included,
  // and answer OPTIONS itself).
  app.use((req, res, next) =>
    (req.method === 'HEAD' || req.method === 'OPTIONS') && req.path.startsWith('/v3/')
      ? undocumented(req, res, next)
      : next(),
  );
  app.get('/v3/partner-orders', legacyOrdersRoute(services));
  app.get('/v3/events', eventsFeedRoute(services));
  const rest = createOpenApiExpressMiddleware({
    router,
    createContext: contextFactory(services, 'rest'),
    responseMeta: restResponseMeta(routes),
    maxBodySize: MAX_BODY_BYTES,
    onError: ({ error, ctx, path }: { error: TRPCError; ctx?: Context; path?: string }) =>
      logFailure(ctx?.log ?? services.log, error, path),
  });
  // Mounted as routes, not with app.use, so that express leaves the path whole for the middleware.
  const bodies = [bodilessIsEmptyJson, jsonBodiesOnly, jsonMediaTypeInLowerCase, ...restJsonBodies()];
  for (const { method, route } of operations) app[method](route, unambiguousPath, ...bodies, rest);
  app.use(undocumented);
  app.use(edgeErrors(operations));
  return services.fairUse.door(routes, operations, app);
}

/**
 * A fault of ours is an error; the database away (a 503, an operational state /readyz shows too) a warning with its
 * cause.
 */
function logFailure(log: Logger, error: TRPCError, path: string | undefined) {
  const cause = error.cause ?? error;
  if (isUnavailable(cause))
    log.warn({ err: cause, procedure: path }, 'the database cannot answer: 503 SERVICE_UNAVAILABLE');
  else if (error.code === 'INTERNAL_SERVER_ERROR') log.error({ err: cause, procedure: path }, 'procedure failed');
}

/**
 * Every answer of the API is one caller's (a key made for it, a token, its orders): no cache on the way may keep one.
 */
const privateAnswers: express.RequestHandler = (_req, res, next) => {
  res.setHeader('cache-control', 'no-store');
  next();
};

const notFramed: express.RequestHandler = (_req, res, next) => {
  res.setHeader('content-security-policy', "frame-ancestors 'none'");
  res.setHeader('x-frame-options', 'DENY');
  next();
};
