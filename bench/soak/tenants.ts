// Tenants: a brand and a partner with its jobs, both with a signed webhook configuration whose URL is the receiver; and
// the mix of requests they send.
import { createHmac, randomUUID } from 'node:crypto';
import { integratorLoggedIn, type processClient } from '../../tests/support/process.ts';
import { dataDir, JOBS, PER_ACCOUNT_CAP, tag } from './config.ts';

/**
 * An account as the load generator sees it: its token, its feed cursor, its answered _cids, and its legacy listings
 * under way, each with the most of the account's other listings that were under way at any moment of its own.
 */
export interface Account {
  id: string;
  token: string;
  feed: string | null;
  cids: string[];
  listings: Set<{ peak: number }>;
}
export interface Tenant {
  label: string;
  brand: Account;
  partner: Account;
  jobs: string[];
  key: string;
  offset: number;
  n: number;
}

export async function makeTenant(
  client: ReturnType<typeof processClient>,
  receiverBase: string,
  label: string,
  offset: number,
): Promise<Tenant> {
  const key = `soak-key-${label}-${tag}`;
  const account = async (role: 'brand' | 'partner'): Promise<Account> => {
    const { accountId, token } = await integratorLoggedIn(
      client,
      dataDir,
      role,
      `soak-${label}-${role}-${tag}@example.com`,
      86_400,
    );
    // The configuration comes before any job, so that every event of the tenant has a delivery.
    await client.admin('webhookConfigs.upsert', {
      accountId,
      scope: role,
      url: `${receiverBase}/hooks/${label}/${role}`,
      signatureKey: key,
      version: '1.3.0',
      transformer: role === 'partner' ? 'partner-format' : 'default',
    });
    return { id: accountId, token, feed: null, cids: [], listings: new Set() };
  };
  const brand = await account('brand');
  const partner = await account('partner');
  const jobs: string[] = [];
  for (let j = 0; j < JOBS; j++) {
    const apiId = `soak-${tag}-${label}-${j}`;
    await client.admin('jobs.create', { brandAccountId: brand.id, partnerId: partner.id, apiId, status: 'accepted' });
    jobs.push(apiId);
  }
  return { label, brand, partner, jobs, key, offset, n: 0 };
}

// The mix: 100 slots per tenant cycle, in a fixed shuffled order, so that an account's requests of one kind are spread.

export const KINDS = {
  paginated: 'GET /v3/partner-orders/paginated',
  legacy: 'GET /v3/partner-orders (streamed, whole scope)',
  order: 'GET /v3/poll/job/*/{id}',
  appointment: 'POST /v3/commands/partner/appointment (signed)',
  yourOrderId: 'POST /v3/commands/partner/your-order-id (signed)',
  brandCommand: 'POST /v3/commands',
  commandResult: 'GET /v3/commands/{cid}',
  feed: 'GET /v3/events',
} as const;
export type Kind = keyof typeof KINDS;
export type Side = 'brand' | 'partner';
const WEIGHTS: [Kind, Side, number][] = [
  ['paginated', 'partner', 18],
  ['legacy', 'partner', 8],
  ['order', 'partner', 9],
  ['order', 'brand', 9],
  ['appointment', 'partner', 8],
  ['yourOrderId', 'partner', 4],
  ['brandCommand', 'brand', 14],
  ['commandResult', 'brand', 10],
  ['commandResult', 'partner', 4],
  ['feed', 'partner', 8],
  ['feed', 'brand', 8],
];
export const SLOTS: [Kind, Side][] = WEIGHTS.flatMap(([kind, side, w]) =>
  Array.from({ length: w }, () => [kind, side] as [Kind, Side]),
);
{
  let seed = 20261123; // mulberry32: the same order on every run
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = SLOTS.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [SLOTS[i], SLOTS[j]] = [SLOTS[j]!, SLOTS[i]!];
  }
}
export const PARTNER_SHARE = WEIGHTS.filter(([, side]) => side === 'partner').reduce((a, [, , w]) => a + w, 0) / 100;
export const WRITE_SHARE =
  WEIGHTS.filter(([kind]) => kind === 'appointment' || kind === 'yourOrderId' || kind === 'brandCommand').reduce(
    (a, [, , w]) => a + w,
    0,
  ) / 100;
/** Enough tenants (2 at least) that no account gets more than PER_ACCOUNT_CAP requests a second. */
export const tenantsFor = (rate: number) => Math.max(2, Math.ceil((rate * PARTNER_SHARE) / PER_ACCOUNT_CAP));

export interface Request {
  kind: Kind;
  method: 'GET' | 'POST';
  path: string;
  token: string;
  body?: string;
  headers?: Record<string, string>;
  expect: number[];
  read?: (body: string) => boolean;
  /** Called once the exchange is over, with the status (null: no answer). */
  done?: (status: number | null) => void;
  /** Whether a 429 is the service's right answer (a third legacy listing of the account), decided at the answer. */
  allow429?: () => boolean;
}

const BRAND_COMMANDS = ['RefreshOrder', 'UpdateOrderExternalId', 'UpdateCustomer'] as const;
export function requestFor(tenant: Tenant, kind: Kind, side: Side): Request {
  const n = tenant.n++;
  const who = tenant[side];
  const job = tenant.jobs[n % tenant.jobs.length]!;
  const get = (path: string, extra: Partial<Request> = {}): Request => ({
    kind,
    method: 'GET',
    path,
    token: who.token,
    expect: [200],
    ...extra,
  });
  const post = (path: string, command: Record<string, unknown>, expect: number, signed: boolean): Request => {
    const body = JSON.stringify(command);
    return {
      kind,
      method: 'POST',
      path,
      token: who.token,
      body,
      expect: [expect],
      ...(signed && {
        headers: { 'x-webhook-signature': createHmac('sha256', tenant.key).update(body).digest('hex') },
      }),
      // A _cid is polled only once its command was answered: before that it may not exist yet.
      done: (status) => {
        if (status === expect) {
          who.cids.push(command._cid as string);
          if (who.cids.length > 50) who.cids.shift();
        }
      },
    };
  };
  switch (kind) {
    case 'paginated':
      return get(`/v3/partner-orders/paginated?page=${(n % 2) + 1}&pageSize=20${n % 3 === 0 ? '&active=true' : ''}`);
    case 'legacy': {
      // At most 2 legacy listings of an account stream at once (CONTRACT §1). The service takes a listing's slot only
      // after its token check and scope query, on either api process, so a listing sent later may take a slot first:
      // a 429 is right for a listing when, at some moment between its sending and its answer, 2 other listings of the
      // account were under way here.
      const me = { peak: who.listings.size };
      for (const other of who.listings) other.peak = Math.max(other.peak, who.listings.size);
      who.listings.add(me);
      // The whole scope, streamed from a cursor: a cut answer is invalid JSON, so the body is checked.
      return get('/v3/partner-orders', {
        allow429: () => me.peak >= 2,
        read: (body) => {
          const list = JSON.parse(body) as unknown[];
          return Array.isArray(list) && list.length === tenant.jobs.length;
        },
        done: () => {
          who.listings.delete(me);
        },
      });
    }
    case 'order':
      return get(`/v3/poll/job/*/${encodeURIComponent(job)}`);
    case 'appointment': {
      const day = String(1 + (n % 28)).padStart(2, '0');
      return post(
        '/v3/commands/partner/appointment',
        {
          _v: '1.0.0',
          _cid: randomUUID(),
          _type: 'SetJobAppointment',
          jobApiId: job,
          appointmentStart: `2027-01-${day}T09:00:00+01:00`,
          appointmentEnd: `2027-01-${day}T11:00:00+01:00`,
        },
        200,
        true,
      );
    }
    case 'yourOrderId':
      return post(
        '/v3/commands/partner/your-order-id',
        {
          _v: '1.0.0',
          _cid: randomUUID(),
          _type: 'SetJobYourOrderId',
          jobApiId: job,
          yourOrderID: `PO-${tag}-${tenant.label}-${n}`,
        },
        200,
        true,
      );
    case 'brandCommand': {
      const type = BRAND_COMMANDS[n % BRAND_COMMANDS.length]!;
      const extra =
        type === 'UpdateOrderExternalId'
          ? { externalId: `EXT-${n}` }
          : type === 'UpdateCustomer'
            ? { customer: { firstName: `Alex ${n}`, email: `customer-${n}@example.com` } }
            : {};
      return post('/v3/commands', { _v: '1.0.0', _cid: randomUUID(), _type: type, orderId: job, ...extra }, 202, false);
    }
    case 'commandResult': {
      // The newest answered command (a brand's may still wait: 204), or one of the last 50.
      const cid = n % 2 === 0 ? who.cids.at(-1) : who.cids[n % Math.max(1, who.cids.length)];
      if (!cid) return requestFor(tenant, 'order', side); // nothing sent yet by this account
      return get(`/v3/commands/${cid}`, { expect: [200, 204] });
    }
    case 'feed':
      return get(`/v3/events?limit=100${who.feed ? `&after=${encodeURIComponent(who.feed)}` : ''}`, {
        read: (body) => {
          const page = JSON.parse(body) as { items: unknown[]; next: string | null };
          if (page.next) who.feed = page.next;
          return Array.isArray(page.items);
        },
      });
  }
}
