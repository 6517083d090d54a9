import type { IncomingMessage } from 'node:http';

/**
 * The route an answer is counted and traced under: the operation's pattern (`/v3/webhook-deliveries/:id/redeliver`),
 * a known tRPC procedure (`/trpc/admin.jobs.create`), or `unmatched`; never the raw path, which would let callers
 * create a series per URL and could carry anything.
 */
export function routeOf(pattern: unknown, url: string, procedures: ReadonlySet<string>): string {
  if (typeof pattern === 'string') return pattern;
  const path = url.split('?')[0] ?? '';
  if (path.startsWith('/trpc/')) {
    const names = path.slice('/trpc/'.length).split(',');
    return names.every((name) => procedures.has(name))
      ? names.length === 1
        ? `/trpc/${names[0]}`
        : '/trpc/(batch)'
      : 'unmatched';
  }
  return 'unmatched';
}

const ANSWERED_UNDER = Symbol('the documented route of a request answered before express');

/** Says which documented route a request answered before express (the fair-use door's 429) was answered under. */
export function answeredUnder(req: IncomingMessage, documentedRoute: string) {
  Object.assign(req, { [ANSWERED_UNDER]: documentedRoute });
}

/**
 * The route as the document writes it (`/v3/poll/job/{version}/{orderId}`), or the procedure for /trpc: the one named
 * by `answeredUnder`, or else from the pattern express matched. Read once the request is answered.
 */
export function documentedRoute(procedures: ReadonlySet<string>) {
  return (req: IncomingMessage): string => {
    const seen = req as IncomingMessage & {
      [ANSWERED_UNDER]?: string;
      route?: { path?: unknown };
      originalUrl?: string;
    };
    if (seen[ANSWERED_UNDER] !== undefined) return seen[ANSWERED_UNDER];
    return routeOf(seen.route?.path, seen.originalUrl ?? req.url ?? '', procedures)
      .replace(/:(\w+)/g, '{$1}')
      .replace(/^\/trpc\//, '');
  };
}
