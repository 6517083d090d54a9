import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { pathToRegexp } from 'path-to-regexp';
import type { Role } from '../../domain/account.ts';
import { DomainError } from '../../domain/errors.ts';
import { problemFor } from '../errors.ts';
import { requestIdFor } from '../http/request-id.ts';
import { traceOfRequest } from '../http/request-traces.ts';
import type { RestOperation } from '../http/rest-routes.ts';
import { answeredUnder } from '../http/route-of.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { countAnswer } from '../metrics.ts';
import type { RouteTable } from '../routers/contracts.ts';
import { bearerToken } from './credentials.ts';

/** The route the metrics count these answers under. */
const FAIR_USE_ROUTE = 'fair use';

/** What the door needs: whether anyone may be refused now, the refusal itself, and where to count and log. */
export interface DoorServices {
  refusals: { any(): boolean; check(input: { accessToken: string; roles: readonly Role[] }): Promise<void> };
  metrics: Metrics;
  log: Logger;
}

/**
 * Fair use at the door, before express, request logging and routing: a valid access token of an account this process
 * already refuses (past its share for the rest of its window, or paced with its next turn more than a window away), on
 * a documented operation of the token's role, gets its 429 here, so that a tenant hammering past its share costs a
 * header parse and a signature check (remembered) per request and slows nobody else down. While no account is refused
 * or paced it costs one call. Everything else (another role, an unknown path or method, the login steps,
 * `/trpc`, a token that does not verify) goes through to `app` and gets the answer its own path gives. Counted in the
 * metrics under the route `fair use`, not logged one by one.
 */

export function fairUseDoor(
  routes: RouteTable,
  operations: readonly RestOperation[],
  services: DoorServices,
  app: RequestListener,
): RequestListener {
  const guarded = guardedOperations(routes, operations);
  return (req, res) => {
    if (!services.refusals.any()) return app(req, res);
    const path = pathOf(req.url);
    const operation = plain(path) ? guarded.get(req.method ?? '')?.find((entry) => entry.path.test(path)) : undefined;
    const accessToken = operation ? bearerToken(req.headers.authorization) : null;
    if (!operation || !accessToken) return app(req, res);
    const { roles } = operation;
    const started = process.hrtime.bigint();
    services.refusals
      .check({ accessToken, roles })
      .then(
        () => app(req, res),
        (error: unknown) => {
          if (!(error instanceof DomainError)) {
            services.log.error(
              { err: error, ...traceOfRequest(req)?.logFields },
              'the early fair-use check failed; the request takes its usual path',
            );
            return app(req, res);
          }
          answeredUnder(req, operation.documented); // the request's span is named by it
          answer(req, res, error);
          countAnswer(
            services.metrics,
            { method: req.method ?? '', route: FAIR_USE_ROUTE, status: res.statusCode },
            started,
          );
        },
      )
      .catch((error: unknown) => {
        services.log.error({ err: error, ...traceOfRequest(req)?.logFields }, 'the fair-use door failed to answer');
        if (!res.headersSent)
          answer(req, res, new DomainError('UNAVAILABLE', 'The request could not be served; send it again.', [], 1));
        else res.destroy();
      });
  };
}

/** Per method, the documented operations that take an access token, with the roles they serve (the routes' meta). */
function guardedOperations(routes: RouteTable, operations: readonly RestOperation[]) {
  const rolesOf = new Map<string, readonly Role[]>(
    Object.values(routes).flatMap(({ meta }) =>
      meta.openapi && meta.roles
        ? [[`${meta.openapi.method.toUpperCase()} ${meta.openapi.path}`, meta.roles] as const]
        : [],
    ),
  );
  const byMethod = new Map<string, { path: RegExp; documented: string; roles: readonly Role[] }[]>();
  for (const { method, path, route } of operations) {
    const roles = rolesOf.get(`${method.toUpperCase()} ${path}`);
    if (!roles) continue;
    const entries = byMethod.get(method.toUpperCase()) ?? [];
    // Matched as express matches the same route (path-to-regexp's defaults are express's: any case, a trailing slash).
    entries.push({ path: pathToRegexp(route).regexp, documented: path, roles });
    byMethod.set(method.toUpperCase(), entries);
  }
  return byMethod;
}

const pathOf = (url = '') => {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
};

/**
 * A path the request path reads as it is: one with a percent-escape that does not decode (express answers 400), a `.`
 * or `..` segment, plain or escaped, or a backslash (answered 404 there) goes through, to get that answer, not a 429.
 */
function plain(path: string) {
  if (path.includes('\\') || /\/\.\.?(\/|$)/.test(path)) return false;
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return new URL(path, 'http://localhost').pathname === path;
  } catch {
    return false;
  }
}

/** The refusal as every other problem answer: problem+json, with the request id and Retry-After. */
function answer(req: IncomingMessage, res: ServerResponse, error: DomainError) {
  const { status, body, retryAfter } = problemFor(error, requestIdFor(req, res));
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/problem+json', // as the procedures' 429 says it
    'content-length': Buffer.byteLength(text),
    ...(retryAfter !== undefined && { 'retry-after': String(retryAfter) }),
  });
  res.end(text);
}
