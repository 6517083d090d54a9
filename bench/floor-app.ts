// The floor of bench/cpu-per-request: the mandated stack with nothing of ours behind it. express 5, pino-http logging
// every request at info through the service's own logger (JSON lines on stdout), trpc-to-openapi, and one procedure
// per measured path with the service's own zod input and output schemas (server/routers/*.contract.ts); each answers a
// fixed answer of the same shape, no database, no auth, no signature check. FLOOR_ANSWERS names a JSON file of the
// answers (the service's own, captured by the bench): { result, partnerCommand, page, feed }. PORT.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initTRPC } from '@trpc/server';
import express from 'express';
import { pinoHttp } from 'pino-http';
import { createOpenApiExpressMiddleware, type OpenApiMeta } from 'trpc-to-openapi';
import { createLogger } from '../server/logger.ts';
import { brandCommands } from '../server/routers/commands.contract.ts';
import { events } from '../server/routers/events.contract.ts';
import { partnerCommands } from '../server/routers/partner-commands.contract.ts';
import { partnerOrders } from '../server/routers/partner-orders.contract.ts';

type Answers = {
  result: Record<string, unknown>;
  partnerCommand: { order: Record<string, unknown> };
  page: { items: Record<string, unknown>[]; page: number; pageSize: number; total: number };
  feed: { items: Record<string, unknown>[]; next: string | null };
};
const answers = JSON.parse(readFileSync(process.env.FLOOR_ANSWERS!, 'utf8')) as Answers;

const t = initTRPC.meta<OpenApiMeta>().create({ isDev: false });
const router = t.router({
  send: t.procedure
    .meta({ openapi: { method: 'POST', path: '/v3/commands' } })
    .input(brandCommands.command)
    .output(brandCommands.accepted)
    .mutation(({ input }) => ({ _cid: input._cid, _type: input._type, status: 'accepted' as const })),
  result: t.procedure
    .meta({ openapi: { method: 'GET', path: '/v3/commands/{cid}' } })
    .input(brandCommands.poll)
    .output(brandCommands.outcome)
    .query(({ input }) => ({ ...answers.result, _cid: input.cid })),
  setJobAppointment: t.procedure
    .meta({ openapi: { method: 'POST', path: '/v3/commands/partner/appointment' } })
    .input(partnerCommands.setJobAppointment)
    .output(partnerCommands.answer)
    .mutation(({ input }) => ({
      _cid: input._cid,
      _type: input._type,
      status: 'succeeded' as const,
      order: answers.partnerCommand.order,
    })),
  paginated: t.procedure
    .meta({ openapi: { method: 'GET', path: '/v3/partner-orders/paginated' } })
    .input(partnerOrders.page)
    .output(partnerOrders.pageAnswer)
    .query(() => answers.page),
  feed: t.procedure
    .meta({ openapi: { method: 'GET', path: '/v3/events' } })
    .input(events.feed)
    .output(events.feedAnswer)
    .query(() => answers.feed),
});

const log = createLogger('info');
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(
  pinoHttp({
    logger: log,
    genReqId: (_req, res) => {
      const id = randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        path: req.url.split('?')[0],
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  }),
);
app.use(express.json({ limit: '1mb' }));
const rest = createOpenApiExpressMiddleware({
  router,
  createContext: () => ({}),
  responseMeta: ({ paths, data }: { paths?: readonly string[]; data?: readonly unknown[] }) => ({
    status: data?.[0] === null ? 204 : paths?.[0] === 'send' ? 202 : 200,
  }),
});
app.post('/v3/commands', rest);
app.get('/v3/commands/:cid', rest);
app.post('/v3/commands/partner/appointment', rest);
app.get('/v3/partner-orders/paginated', rest);
app.get('/v3/events', rest);

const server = createServer(app);
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  log.info({ port: (server.address() as AddressInfo).port, role: 'floor' }, 'listening');
  log.flush();
});
