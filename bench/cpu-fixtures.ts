// What bench/cpu-per-request (and bench/tracing-cost) needs in the database, made through the service's own API, the
// five requests it sends, and the sender.

import { createHmac, randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { integratorLoggedIn, type processClient } from '../tests/support/process.ts';

type Client = ReturnType<typeof processClient>;

export interface Fixtures {
  brandAccountId: string;
  brandToken: string;
  partnerToken: string;
  signatureKey: string;
  /** Orders of the brand, assigned to the partner. */
  jobs: string[];
  /** `_cid`s of brand commands that have run: their results are there to read. */
  finished: string[];
  /** One answer of each GET and of the signed command, as the service gave it: the floor app answers these. */
  answers: { result: unknown; partnerCommand: unknown; page: unknown; feed: unknown };
}

const JOBS = 200;
const FINISHED = 50;
/** More than a page of the feed (100 by default) before the measurement starts: each read is a full first page. */
const APPOINTMENTS = 120;

/**
 * A brand and a partner, each logged in like an integrator; the partner's configuration (partner-format 1.3.0, no URL,
 * a signature key); orders of the brand assigned to the partner (each an event of the partner's feed); brand commands
 * run to their results (so `client` must be a process that executes them: `SERVICE_ROLE=all`); and signed
 * appointments, which also fill the feed.
 */
export async function prepare(client: Client, dataDir: string): Promise<Fixtures> {
  const tag = randomUUID().slice(0, 8);
  const brand = await integratorLoggedIn(client, dataDir, 'brand', `cpu-brand-${tag}@example.com`, 86_400);
  const partner = await integratorLoggedIn(client, dataDir, 'partner', `cpu-partner-${tag}@example.com`, 86_400);
  const signatureKey = `cpu-bench-signature-key-${tag}`;
  await client.admin('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey,
  });
  const jobs: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const apiId = `cpu-${tag}-${i}`;
    await client.admin('jobs.create', {
      brandAccountId: brand.accountId,
      partnerId: partner.accountId,
      apiId,
      status: 'accepted',
    });
    jobs.push(apiId);
  }
  const fixtures: Fixtures = {
    brandAccountId: brand.accountId,
    brandToken: brand.token,
    partnerToken: partner.token,
    signatureKey,
    jobs,
    finished: [],
    answers: {} as Fixtures['answers'],
  };
  const call = async (request: BenchRequest, expect: number) => {
    const res = await client.rest(request.path, {
      method: request.method,
      token: request.token,
      headers: request.headers,
      ...(request.body !== undefined && { body: request.body }),
    });
    if (res.status !== expect)
      throw new Error(`${request.method} ${request.path} answered ${res.status}: ${await res.text()}`);
    return res.status === 204 ? null : (res.json() as Promise<unknown>);
  };
  const paths = benchPaths(fixtures);
  for (let i = 0; i < FINISHED; i++) {
    const command = paths.command.next();
    await call(command, 202);
    fixtures.finished.push((JSON.parse(command.body!) as { _cid: string })._cid);
  }
  for (let i = 0; i < APPOINTMENTS; i++) fixtures.answers.partnerCommand = await call(paths.signed.next(), 200);
  for (const cid of fixtures.finished) {
    const deadline = Date.now() + 30_000;
    while ((await call({ ...paths.result.next(), path: `/v3/commands/${cid}` }, 200).catch(() => null)) === null) {
      if (Date.now() > deadline) throw new Error(`the command ${cid} did not run within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  fixtures.answers.result = await call(paths.result.next(), 200);
  fixtures.answers.page = await call(paths.page.next(), 200);
  fixtures.answers.feed = await call(paths.feed.next(), 200);
  return fixtures;
}

export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  token: string;
  body?: string;
  headers?: Record<string, string>;
}
export interface BenchPath {
  label: string;
  expect: number;
  next(): BenchRequest;
}
export type PathName = 'command' | 'result' | 'signed' | 'page' | 'feed';

/** The five requests, each call a new one where the service needs it (a fresh `_cid`, the next order). */
export function benchPaths(f: Fixtures): Record<PathName, BenchPath> {
  let n = 0;
  const json = { 'content-type': 'application/json' };
  return {
    command: {
      label: 'POST /v3/commands (RefreshOrder)',
      expect: 202,
      next: () => ({
        method: 'POST',
        path: '/v3/commands',
        token: f.brandToken,
        headers: json,
        body: JSON.stringify({
          _v: '1.0.0',
          _cid: randomUUID(),
          _type: 'RefreshOrder',
          orderId: f.jobs[n++ % f.jobs.length],
        }),
      }),
    },
    result: {
      label: 'GET /v3/commands/{cid} (a result, 200)',
      expect: 200,
      next: () => ({
        method: 'GET',
        path: `/v3/commands/${f.finished[n++ % Math.max(1, f.finished.length)] ?? 'none'}`,
        token: f.brandToken,
      }),
    },
    signed: {
      label: 'POST /v3/commands/partner/appointment (signed)',
      expect: 200,
      next: () => {
        const day = String(1 + (n % 28)).padStart(2, '0');
        const body = JSON.stringify({
          _v: '1.0.0',
          _cid: randomUUID(),
          _type: 'SetJobAppointment',
          jobApiId: f.jobs[n++ % f.jobs.length],
          appointmentStart: `2027-01-${day}T09:00:00+01:00`,
          appointmentEnd: `2027-01-${day}T11:00:00+01:00`,
        });
        return {
          method: 'POST',
          path: '/v3/commands/partner/appointment',
          token: f.partnerToken,
          body,
          headers: { ...json, 'x-webhook-signature': createHmac('sha256', f.signatureKey).update(body).digest('hex') },
        };
      },
    },
    page: {
      label: 'GET /v3/partner-orders/paginated (page 1 of 50)',
      expect: 200,
      next: () => ({ method: 'GET', path: '/v3/partner-orders/paginated?page=1', token: f.partnerToken }),
    },
    feed: {
      label: 'GET /v3/events (first page of 100)',
      expect: 200,
      next: () => ({ method: 'GET', path: '/v3/events', token: f.partnerToken }),
    },
  };
}

/**
 * `amount` requests of one path from `connections` clients, each sending its next request when its answer is in
 * (undici, in this process, on CPU 1). Answers other than the path's own status, and connection errors, are counted.
 */
export async function send(port: number, path: BenchPath, amount: number, connections: number) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections, pipelining: 1 });
  let left = amount;
  let unexpected = 0;
  const statuses: Record<number, number> = {};
  const client = async () => {
    while (left-- > 0) {
      const r = path.next();
      try {
        const res = await pool.request({
          method: r.method,
          path: r.path,
          headers: { ...r.headers, authorization: `Bearer ${r.token}` },
          body: r.body,
        });
        await res.body.dump();
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode !== path.expect) unexpected++;
      } catch {
        unexpected++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  await pool.close();
  return { unexpected, statuses };
}
