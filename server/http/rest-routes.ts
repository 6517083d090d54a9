import type { RequestHandler } from 'express';
import { match } from 'path-to-regexp';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { problem } from '../errors.ts';
import { requestIdFor } from './request-id.ts';

type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: readonly HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

export interface RestOperation {
  method: HttpMethod;
  /** As in the document, e.g. `/v3/poll/job/{version}/{orderId}`. */
  path: string;
  /** The same path in express's syntax, e.g. `/v3/poll/job/:version/:orderId`. */
  route: string;
}

/** The operations the document describes: the REST face answers exactly these, and nothing else. */
export function documentedOperations(document: OpenAPIObject): RestOperation[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({
      method,
      path,
      route: path.replace(/\{(\w+)\}/g, ':$1'),
    })),
  );
}

const templateMatcher = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '[^/]+')}/?$`);

/**
 * What reaches past the documented operations: 405 with `Allow` for a documented path and another method,
 * 404 for everything else, both as problems carrying the request id like every other answer.
 */
export function undocumentedRoute(operations: readonly RestOperation[]): RequestHandler {
  const byPath = new Map<string, { matches: RegExp; methods: string[] }>();
  for (const op of operations) {
    const entry = byPath.get(op.path) ?? { matches: templateMatcher(op.path), methods: [] };
    entry.methods.push(op.method.toUpperCase());
    byPath.set(op.path, entry);
  }
  return (req, res) => {
    // The worker's port logs no requests, so no id was given yet there.
    const requestId = String(req.id ?? requestIdFor(req, res));
    const known = [...byPath.values()].find((entry) => entry.matches.test(req.path));
    if (known) {
      res.status(405).setHeader('allow', known.methods.join(', '));
      res
        .type('application/problem+json')
        .send(
          JSON.stringify(
            problem(
              'METHOD_NOT_SUPPORTED',
              405,
              `${req.method} is not supported on this path; use ${known.methods.join(' or ')}.`,
              { requestId },
            ),
          ),
        );
      return;
    }
    res
      .status(404)
      .type('application/problem+json')
      .send(JSON.stringify(problem('NOT_FOUND', 404, `There is no ${req.method} ${req.path}.`, { requestId })));
  };
}

/**
 * The name of the first path parameter of the operation this path names whose percent-escapes are not UTF-8; null when
 * none.
 */
export function undecodableParameter(
  operations: readonly RestOperation[],
  method: string,
  path: string,
): string | null {
  for (const op of operations) {
    if (op.method !== method.toLowerCase()) continue;
    const found = match<Record<string, string>>(op.route, { decode: false })(path);
    if (!found) continue;
    for (const [name, value] of Object.entries(found.params)) {
      try {
        decodeURIComponent(value);
      } catch {
        return name;
      }
    }
  }
  return null;
}
