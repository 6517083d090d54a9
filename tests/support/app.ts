import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import supertest from 'supertest';
import { type BuildOverrides, buildApp } from '../../server/compose.ts';
import { loadConfig } from '../../server/config.ts';
import { buildOpenApiDocument } from '../../server/openapi/document.ts';
import { routeTable } from '../../server/routers/contracts.ts';
import { appRouter } from '../../server/routers/index.ts';
import { checkedAgent } from './openapi-validation.ts';
import { closeAtEnd, sharedDatabase } from './shared.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const JWT_SECRET = 'test-jwt-secret-0123456789-0123456789-abcdef';

/** The real app on the shared database, configured as by these environment settings. */
export async function testApp(env: Record<string, string> = {}, overrides: BuildOverrides = {}) {
  const config = loadConfig({
    ADMIN_TOKEN,
    JWT_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    TRUST_PROXY: 'loopback',
    // Generous limits: suites share one client address; the limit tests set their own.
    LOGIN_LIMIT_PER_EMAIL: '1000',
    LOGIN_LIMIT_PER_ADDRESS: '100000',
    API_RATE_LIMIT_PER_ACCOUNT: '1000000',
    API_CONCURRENCY_PER_ACCOUNT: '1000',
    ...env,
  });
  const built = await buildApp(config, {
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    database: await sharedDatabase(),
    ...overrides,
  });
  closeAtEnd(built.close);
  const http = checkedAgent(supertest(built.app), document());
  const admin = adminClient(http);
  return { ...built, http, admin };
}

/** Calls `admin.*` procedures over /trpc the way internal tools do. */
export function adminClient(http: supertest.Agent | ReturnType<typeof supertest>, token: string | null = ADMIN_TOKEN) {
  const auth = (req: supertest.Test) => (token === null ? req : req.set('authorization', `Bearer ${token}`));
  return {
    mutate: (name: string, input: unknown) => auth(http.post(`/trpc/admin.${name}`).send(input as object)),
    /** A query procedure's data (GET with the input in the query string). */
    async query<T = Record<string, unknown>>(name: string, input: unknown): Promise<T> {
      const res = await auth(http.get(`/trpc/admin.${name}?input=${encodeURIComponent(JSON.stringify(input))}`));
      if (res.status !== 200) throw new Error(`admin.${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.result.data as T;
    },
    /** The procedure's data, failing loudly when the call did not succeed. */
    async call<T = Record<string, unknown>>(name: string, input: unknown): Promise<T> {
      const res = await auth(http.post(`/trpc/admin.${name}`).send(input as object));
      if (res.status !== 200) throw new Error(`admin.${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.result.data as T;
    },
  };
}

let cachedDocument: ReturnType<typeof buildOpenApiDocument> | undefined;
/** The document the service serves, against which every REST answer of the tests is checked. */
export const document = () => (cachedDocument ??= buildOpenApiDocument(appRouter, routeTable));

export const uniqueEmail = (prefix = 'contact') => `${prefix}-${randomUUID().slice(0, 8)}@example.com`;

/** Serves an app built by `testApp` on a loopback port (closed after the last suite); answers its base URL. */
export async function listening(app: { app: RequestListener }): Promise<string> {
  const server = createServer(app.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closeAtEnd(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
