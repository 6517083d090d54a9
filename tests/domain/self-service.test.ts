import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../domain/auth.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { listOwnDeliveries, redeliverOwn } from '../../domain/use-cases/own-deliveries.ts';
import { readEventFeed } from '../../domain/use-cases/read-event-feed.ts';
import { setJobStatus } from '../../domain/use-cases/set-job-status.ts';
import { testWebhookEndpoint } from '../../domain/use-cases/test-webhook-endpoint.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { fakeDeps, type ScriptedWebhookSender } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

const test = suite('integrator self-service on the pure domain');
/** A feed read whose positioning round must not fail. */
const strict = {
  sequencingFailed: (error: unknown) => {
    throw error;
  },
};
const principal = (accountId: string, role: 'brand' | 'partner'): Principal => ({ contactId: 'c', accountId, role });
const brandConfig = (accountId: string, url?: string) => ({
  accountId,
  scope: 'brand' as const,
  transformer: 'default' as const,
  version: '1.1.0' as const,
  ...(url && { url, signatureKey: 'key-0123456789abcdef' }),
});

test("the feed: the endpoint's events in order, limit capped at 500; GONE past the retention window, or once an event after the cursor was purged", async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  await rejectsWith(
    readEventFeed(deps, principal(brand.id, 'brand'), { after: null, retentionDays: 30 }, strict),
    'NOT_FOUND',
  );
  await upsertWebhookConfig(deps, brandConfig(brand.id));
  await createJob(deps, { brandAccountId: brand.id });
  await createJob(deps, { brandAccountId: brand.id });
  const page = await readEventFeed(
    deps,
    principal(brand.id, 'brand'),
    { after: null, limit: 1, retentionDays: 30 },
    strict,
  );
  assert.is(page.items.length, 1);
  assert.is(JSON.parse(page.items[0]!)._v, '1.1.0', 'each item the JSON text as delivered');
  const rest = await readEventFeed(
    deps,
    principal(brand.id, 'brand'),
    { after: page.next, limit: 10_000, retentionDays: 30 },
    strict,
  );
  assert.equal(
    rest.items.map((e) => JSON.parse(e)._eid),
    [deps.events.stored[1]!.id],
  );
  const empty = await readEventFeed(
    deps,
    principal(brand.id, 'brand'),
    { after: rest.next, retentionDays: 30 },
    strict,
  );
  assert.equal(empty, { items: [], next: rest.next }, 'an empty page keeps the cursor');
  // The backstop: an event after the cursor purged while the cursor is within the window (one written before the
  // cursor's event and positioned after it, as a transaction that commits late can do).
  const endpointId = deps.events.stored[0]!.endpointId!;
  deps.eventFeed.forget(endpointId, rest.next!.position);
  assert.equal(
    (await readEventFeed(deps, principal(brand.id, 'brand'), { after: rest.next, retentionDays: 30 }, strict)).items,
    [],
    'nothing after it was purged',
  );
  await rejectsWith(
    readEventFeed(deps, principal(brand.id, 'brand'), { after: page.next, retentionDays: 30 }, strict),
    'GONE',
  );
  // Past the window, a cursor is gone whatever the purge did: nothing after rest.next was purged.
  deps.clock.advance(30 * 86_400);
  assert.equal(
    (await readEventFeed(deps, principal(brand.id, 'brand'), { after: rest.next, retentionDays: 30 }, strict)).items,
    [],
    'on the edge of the window',
  );
  deps.clock.advance(1);
  await rejectsWith(
    readEventFeed(deps, principal(brand.id, 'brand'), { after: rest.next, retentionDays: 30 }, strict),
    'GONE',
  );
  await rejectsWith(
    readEventFeed(
      deps,
      principal(brand.id, 'brand'),
      { after: { position: 0, createdAt: new Date(0) }, retentionDays: 30 },
      strict,
    ),
    'GONE',
  );
});

test('a failed positioning round before a feed read is told, and the page read all the same', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  await upsertWebhookConfig(deps, brandConfig(brand.id));
  await createJob(deps, { brandAccountId: brand.id });
  await deps.eventFeed.sequence(500);
  await createJob(deps, { brandAccountId: brand.id });
  const failure = new Error('the round failed');
  deps.eventFeed.sequence = async () => {
    throw failure;
  };
  const told: unknown[] = [];
  const page = await readEventFeed(
    deps,
    principal(brand.id, 'brand'),
    { after: null, retentionDays: 30 },
    { sequencingFailed: (e) => told.push(e) },
  );
  assert.equal(told, [failure]);
  assert.equal(
    page.items.map((e) => JSON.parse(e)._eid),
    [deps.events.stored[0]!.id],
    'what earlier rounds positioned',
  );
});

/** A brand's endpoint with three events, the first two positioned, and a read of its feed. */
async function threeEventsTwoPositioned() {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  await upsertWebhookConfig(deps, brandConfig(brand.id));
  for (let i = 0; i < 3; i++) await createJob(deps, { brandAccountId: brand.id });
  await deps.eventFeed.sequence(2);
  const read = (after: Awaited<ReturnType<typeof readEventFeed>>['next'], limit: number) =>
    readEventFeed(deps, principal(brand.id, 'brand'), { after, limit, retentionDays: 30 }, strict);
  return { deps, brand, read };
}

test('a full page is answered without a positioning round; a short one is read on after a round', async () => {
  const { deps, brand, read } = await threeEventsTwoPositioned();
  const rounds: number[] = [];
  const sequence = deps.eventFeed.sequence.bind(deps.eventFeed);
  deps.eventFeed.sequence = async (limit, wait) => {
    rounds.push(await sequence(limit, wait));
    return rounds.at(-1)!;
  };
  const ids = deps.events.stored.map((e) => e.id);
  const full = await read(null, 2);
  assert.equal(
    full.items.map((e) => JSON.parse(e)._eid),
    ids.slice(0, 2),
  );
  assert.equal(rounds, [], 'two positioned events fill a page of two: no round');
  const short = await read(full.next, 2);
  assert.equal(rounds, [1], 'the page came back short: the round positioned the third');
  assert.equal(
    short.items.map((e) => JSON.parse(e)._eid),
    [ids[2]],
    'read on after the round',
  );
  await createJob(deps, { brandAccountId: brand.id });
  const part = await read(null, 5);
  assert.equal(rounds, [1, 1]);
  assert.equal(
    part.items.map((e) => JSON.parse(e)._eid),
    deps.events.stored.map((e) => e.id),
    'the three read before the round, and the fourth after it',
  );
});

test("one order's short page reads on after the round with the same order, no other's", async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  await upsertWebhookConfig(deps, brandConfig(brand.id));
  const a = await createJob(deps, { brandAccountId: brand.id });
  const b = await createJob(deps, { brandAccountId: brand.id });
  await deps.eventFeed.sequence(2);
  await setJobStatus(deps, { apiId: b.apiId, status: 'open' });
  await setJobStatus(deps, { apiId: a.apiId, status: 'open' });
  const page = await readEventFeed(
    deps,
    principal(brand.id, 'brand'),
    { after: null, limit: 5, orderId: a.apiId, retentionDays: 30 },
    strict,
  );
  assert.equal(
    page.items.map((e) => [JSON.parse(e).orderId, JSON.parse(e).status]),
    [
      [a.apiId, 'new'],
      [a.apiId, 'open'],
    ],
    "a's event read first, its second positioned by the round and read on; b's left out",
  );
});

test('a purge between the reads of a short page: it ends with the first read, GONE if that had none', async () => {
  const { deps, brand, read } = await threeEventsTwoPositioned();
  const endpointId = deps.events.stored[0]!.endpointId!;
  const ids = deps.events.stored.map((e) => e.id);
  const first = await read(null, 1);
  // The round positions the third (3), and a purge that runs ahead deletes through it before the rest is read.
  const sequence = deps.eventFeed.sequence.bind(deps.eventFeed);
  deps.eventFeed.sequence = async (limit, wait) => {
    const n = await sequence(limit, wait);
    deps.eventFeed.forget(endpointId, 3);
    return n;
  };
  const page = await read(first.next, 5);
  assert.equal(
    page.items.map((e) => JSON.parse(e)._eid),
    [ids[1]],
    'what the first read had, and no more',
  );
  assert.is(page.next!.position, 2);
  await rejectsWith(read(page.next, 5), 'GONE');
  // A first read with nothing, the purge past its cursor meanwhile: GONE.
  await createJob(deps, { brandAccountId: brand.id });
  deps.eventFeed.sequence = async (limit, wait) => {
    const n = await sequence(limit, wait);
    deps.eventFeed.forget(endpointId, 4);
    return n;
  };
  await rejectsWith(read({ position: 3, createdAt: deps.clock.now() }, 5), 'GONE');
});

test("a child partner uses its master's endpoint; a partner with none is FORBIDDEN", async () => {
  const deps = fakeDeps();
  const master = await createAccount(deps, { name: 'M', role: 'partner' });
  const child = await createAccount(deps, { name: 'C', role: 'partner', parentId: master.id });
  await rejectsWith(listOwnDeliveries(deps, principal(child.id, 'partner'), {}), 'FORBIDDEN');
  await upsertWebhookConfig(deps, {
    accountId: master.id,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
    url: 'https://m.example.com/h',
  });
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  for (let i = 0; i < 3; i++) await createJob(deps, { brandAccountId: brand.id, partnerId: child.id });
  const first = await listOwnDeliveries(deps, principal(child.id, 'partner'), { limit: 2 });
  assert.is(first.items.length, 2);
  assert.ok(first.next, 'more to come');
  const second = await listOwnDeliveries(deps, principal(child.id, 'partner'), { limit: 2, before: first.next! });
  assert.equal([second.items.length, second.next], [1, null]);
  await rejectsWith(redeliverOwn(deps, principal(brand.id, 'brand'), first.items[0]!.id), 'NOT_FOUND');
});

test("the endpoint test: needs a URL, sends a WebhookTestEvent of the endpoint's version with its key, counts against the limit", async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  const caller = principal(brand.id, 'brand');
  await upsertWebhookConfig(deps, brandConfig(brand.id));
  await rejectsWith(testWebhookEndpoint(deps, caller), 'NOT_FOUND');
  await upsertWebhookConfig(deps, brandConfig(brand.id, 'https://b.example.com/h'));
  const outcome = await testWebhookEndpoint(deps, caller);
  assert.equal(outcome, { delivered: true, statusCode: 200, durationMs: 1, error: null });
  const [sent] = (deps.webhookSender as ScriptedWebhookSender).sent;
  assert.equal(JSON.parse(sent!.body), {
    _eid: sent!.eventId,
    _type: 'WebhookTestEvent',
    _v: '1.1.0',
    sentAt: deps.clock.now().toISOString(),
  });
  assert.equal([sent!.url, sent!.signatureKeys], ['https://b.example.com/h', ['key-0123456789abcdef']]);
  assert.is(deps.events.stored.length, 0, 'nothing stored');
  for (let i = 2; i <= 10; i++) await testWebhookEndpoint(deps, caller);
  await rejectsWith(testWebhookEndpoint(deps, caller), 'RATE_LIMITED');
});

test.run();
