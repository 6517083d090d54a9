import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../domain/auth.ts';
import type { DomainError } from '../../domain/errors.ts';
import { INACTIVE_STATUSES, JOB_STATUSES } from '../../domain/job.ts';
import type { Deps } from '../../domain/ports.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { listPartnerOrdersPage, streamPartnerOrders } from '../../domain/use-cases/list-partner-orders.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { fakeDeps } from '../fakes.ts';
import { testApp } from '../support/app.ts';

// The listings, against an oracle written straight from SPEC §4.2: the visible set is the owner of the
// resolved configuration and its direct children; total counts it under the filters; order is updatedAt
// desc, then apiId. Run on the in-memory fakes and on the real SQL of the MikroORM adapters.
const test = suite('property: listings return exactly the resolved scope');

const world = fc.record({
  partners: fc.array(
    fc.record({
      parent: fc.option(fc.nat(5), { nil: null }),
      config: fc.constantFrom(null, 'partner-format', 'partner-format', 'default'),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  jobs: fc.array(
    fc.record({
      partner: fc.option(fc.nat(3), { nil: null, freq: 6 }),
      status: fc.constantFrom(...JOB_STATUSES),
      minute: fc.nat(4), // few distinct times: plenty of ties
    }),
    { minLength: 3, maxLength: 30, size: 'max' },
  ),
  caller: fc.nat(5),
  since: fc.option(fc.nat(4), { nil: null }),
  active: fc.boolean(),
  page: fc.integer({ min: 1, max: 4 }),
  pageSize: fc.integer({ min: 1, max: 4 }),
  offset: fc.nat(6),
  limit: fc.option(fc.nat(10), { nil: null }),
});
type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

const minute = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));

async function build(deps: Deps, w: World, tag: string) {
  const brand = await createAccount(deps, { name: 'brand', role: 'brand' });
  const ids: string[] = [];
  const parents: (number | null)[] = [];
  for (const [i, p] of w.partners.entries()) {
    // Only an earlier top-level partner can be a master: two levels at most.
    const parent = p.parent !== null && p.parent < i && parents[p.parent] === null ? p.parent : null;
    parents.push(parent);
    ids.push(
      (await createAccount(deps, { name: `p${i}`, role: 'partner', parentId: parent === null ? null : ids[parent] }))
        .id,
    );
    if (p.config)
      await upsertWebhookConfig(deps, {
        accountId: ids[i]!,
        scope: 'partner',
        transformer: p.config,
        version: '1.3.0',
      });
  }
  const jobs = [];
  for (const [i, j] of w.jobs.entries()) {
    const partnerIndex = j.partner !== null && j.partner < ids.length ? j.partner : null;
    const job = await createJob(deps, {
      brandAccountId: brand.id,
      apiId: `${tag}-${String(i).padStart(2, '0')}-${(i * 7919) % 13}`,
      partnerId: partnerIndex === null ? null : ids[partnerIndex],
      status: j.status,
      updatedAt: minute(j.minute),
    });
    jobs.push({ apiId: job.apiId, partnerIndex, status: j.status, minute: j.minute });
  }
  return { ids, parents, jobs };
}

function oracle(w: World, built: Awaited<ReturnType<typeof build>>) {
  const caller = w.caller % built.ids.length;
  const configOf = (i: number) => w.partners[i]!.config;
  const owner = configOf(caller)
    ? caller
    : built.parents[caller] !== null && configOf(built.parents[caller]!)
      ? built.parents[caller]!
      : null;
  if (owner === null) return { caller, outcome: 'forbidden' as const };
  const scope = new Set([owner, ...built.parents.flatMap((p, i) => (p === owner ? [i] : []))]);
  const rows = built.jobs
    .filter((j) => j.partnerIndex !== null && scope.has(j.partnerIndex))
    .filter((j) => w.since === null || j.minute >= w.since)
    .filter((j) => !w.active || !INACTIVE_STATUSES.includes(j.status))
    .sort((a, b) => b.minute - a.minute || (a.apiId < b.apiId ? -1 : 1))
    .map((j) => j.apiId);
  return {
    caller,
    outcome: configOf(owner) === 'partner-format' ? ('listed' as const) : ('wrong-transformer' as const),
    rows,
  };
}

async function check(
  run: <T>(work: (deps: Deps) => Promise<T>) => Promise<T>,
  read: <T>(work: (deps: Deps) => Promise<T>) => Promise<T>,
  w: World,
  tag: string,
) {
  const built = await run((deps) => build(deps, w, tag));
  const expected = oracle(w, built);
  const principal: Principal = { contactId: 'c', accountId: built.ids[expected.caller]!, role: 'partner' };
  const filter = { updatedSince: w.since === null ? null : minute(w.since), active: w.active };
  const page = await read((deps) =>
    listPartnerOrdersPage(deps, principal, { ...filter, page: w.page, pageSize: w.pageSize }),
  ).catch((e: unknown) => e);
  if (expected.outcome === 'forbidden') {
    assert.is((page as DomainError).code, 'FORBIDDEN');
    return;
  }
  if (expected.outcome === 'wrong-transformer') assert.is((page as DomainError).code, 'VALIDATION_FAILED');
  else {
    const { items, total } = page as { items: { jobApiId: string }[]; total: number };
    assert.is(total, expected.rows!.length);
    assert.equal(
      items.map((i) => i.jobApiId),
      expected.rows!.slice((w.page - 1) * w.pageSize, w.page * w.pageSize),
    );
  }
  const streamed: string[] = [];
  const batches = await read((deps) =>
    streamPartnerOrders(deps, principal, { ...filter, offset: w.offset, limit: w.limit }),
  );
  for await (const batch of batches) streamed.push(...batch.map((i) => String(i.jobApiId ?? i.orderId)));
  assert.equal(streamed, expected.rows!.slice(w.offset, w.limit === null ? undefined : w.offset + w.limit));
}

test('in-memory fakes (300 runs)', async () => {
  await fc.assert(
    fc.asyncProperty(world, async (w) => {
      const deps = fakeDeps();
      await check(
        (work) => work(deps),
        (work) => work(deps),
        w,
        'mem',
      );
    }),
    { numRuns: 300 },
  );
});

test('MikroORM adapters and their SQL (100 runs)', async () => {
  const { services } = await testApp();
  let run = 0;
  await fc.assert(
    fc.asyncProperty(world, async (w) => {
      await check(
        (work) => services.unitOfWork().transaction(work),
        (work) => services.unitOfWork().statements(work),
        w,
        `sql${++run}-${Date.now()}`,
      );
    }),
    { numRuns: 100 },
  );
});

test.run();
