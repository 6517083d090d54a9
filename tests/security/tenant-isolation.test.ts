import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox } from '../support/integrators.ts';

// Tenant isolation as a property: random worlds of brands, master partners and their children, with or without a
// partner configuration of their own, and jobs assigned at random. Every account reads and writes every job, and the
// answer must be what SPEC §4.2 and CONTRACT §5 allow, computed here from the world alone (the oracle): the
// single-order poll of brands and partners, both partner commands' ownership rule, command results across accounts, and
// the listings and the feed holding nothing from outside the caller's scope. FUZZ_SEED/FUZZ_PATH replay a failure.
const test = suite('tenant isolation over random account hierarchies');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
const RUNS = Number(process.env.ISOLATION_RUNS ?? 6);
const replay = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {};

test.before(async () => {
  app = await appWithMailbox();
});

const world = fc.record({
  masters: fc.array(fc.record({ config: fc.boolean(), children: fc.array(fc.boolean(), { maxLength: 2 }) }), {
    minLength: 1,
    maxLength: 2,
  }),
  jobs: fc.array(fc.record({ brand: fc.nat(1), partner: fc.option(fc.nat(5), { nil: null }) }), {
    minLength: 2,
    maxLength: 6,
  }),
});

interface Account {
  id: string;
  role: 'brand' | 'partner';
  parent: string | null;
  config: boolean;
  token: string;
}

async function account(role: 'brand' | 'partner', parent: string | null, config: boolean): Promise<Account> {
  const { id } = await app.admin.call<{ id: string }>('accounts.create', {
    name: `${role} ${randomUUID().slice(0, 6)}`,
    role,
    ...(parent && { parentId: parent }),
  });
  const { id: contactId } = await app.admin.call<{ id: string }>('contacts.create', {
    accountId: id,
    email: `iso-${randomUUID().slice(0, 12)}@example.com`,
  });
  if (config)
    await app.admin.call('webhookConfigs.upsert', {
      accountId: id,
      scope: role,
      url: null,
      transformer: role === 'partner' ? 'partner-format' : 'default',
      version: '1.3.0',
    });
  const token = await app.services
    .unitOfWork()
    .statements((deps) => deps.tokens.issue('access', { contactId, accountId: id, role }, deps.clock.now(), 3600));
  return { id, role, parent, config, token };
}

test('nobody reads or changes what is not theirs', async () => {
  await fc.assert(
    fc.asyncProperty(world, async (w) => {
      const brands = [await account('brand', null, true), await account('brand', null, false)];
      const partners: Account[] = [];
      for (const m of w.masters) {
        const master = await account('partner', null, m.config);
        partners.push(master);
        for (const childConfig of m.children) partners.push(await account('partner', master.id, childConfig));
      }
      const jobs: { apiId: string; brand: string; partner: string | null }[] = [];
      for (const j of w.jobs) {
        const partner = j.partner === null ? null : partners[j.partner % partners.length]!;
        const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', {
          brandAccountId: brands[j.brand]!.id,
          partnerId: partner?.id ?? null,
          status: 'accepted',
        });
        jobs.push({ apiId, brand: brands[j.brand]!.id, partner: partner?.id ?? null });
      }

      // The oracle, from SPEC §4.2 and CONTRACT §5.
      const childrenOf = (id: string) => partners.filter((p) => p.parent === id).map((p) => p.id);
      const byId = (id: string) => partners.find((p) => p.id === id)!;
      const scopeOwner = (p: Account) => (p.config ? p.id : p.parent && byId(p.parent).config ? p.parent : null);
      const visibleTo = (p: Account) => {
        const owner = scopeOwner(p);
        return owner ? [owner, ...childrenOf(owner)] : null;
      };
      const owns = (p: Account, job: { partner: string | null }) =>
        job.partner !== null && [p.id, ...childrenOf(p.id)].includes(job.partner);

      const call = (who: Account, path: string) => app.http.get(path).set('authorization', `Bearer ${who.token}`);
      for (const brand of brands) {
        for (const job of jobs) {
          const res = await call(brand, `/v3/poll/job/*/${job.apiId}`);
          assert.is(res.status, job.brand === brand.id ? 200 : 404, `brand poll of ${job.apiId}`);
        }
      }
      for (const p of partners) {
        const scope = visibleTo(p);
        for (const job of jobs) {
          const res = await call(p, `/v3/poll/job/*/${job.apiId}`);
          const expected = scope === null ? 403 : job.partner !== null && scope.includes(job.partner) ? 200 : 404;
          assert.is(
            res.status,
            expected,
            `partner poll of ${job.apiId} (scope ${JSON.stringify(scope)}, job partner ${job.partner})`,
          );
        }
        const listing = await call(p, '/v3/partner-orders');
        if (scope === null) assert.is(listing.status, 403);
        else {
          const mine = jobs
            .filter((j) => j.partner !== null && scope.includes(j.partner))
            .map((j) => j.apiId)
            .sort();
          assert.equal(
            (listing.body as { jobApiId: string }[])
              .map((o) => o.jobApiId)
              .filter((id) => jobs.some((j) => j.apiId === id))
              .sort(),
            mine,
            'legacy listing',
          );
        }
        for (const job of jobs) {
          const cid = randomUUID();
          const res = await app.http
            .post('/v3/commands/partner/your-order-id')
            .set('authorization', `Bearer ${p.token}`)
            .send({
              _v: '1.0.0',
              _cid: cid,
              _type: 'SetJobYourOrderId',
              jobApiId: job.apiId,
              yourOrderID: `iso-${cid.slice(0, 8)}`,
            });
          assert.is(
            res.status,
            owns(p, job) ? 200 : 403,
            `partner command on ${job.apiId} (job partner ${job.partner})`,
          );
          if (res.status !== 200) continue;
          // Its result is the sender's alone.
          for (const other of [...brands, ...partners].filter((a) => a.id !== p.id))
            assert.is((await call(other, `/v3/commands/${cid}`)).status, 404, "another account's result");
          assert.is((await call(p, `/v3/commands/${cid}`)).status, 200);
        }
      }
      // The brand with a configuration has a feed; it holds events of its own orders only.
      const feed = await call(brands[0]!, '/v3/events?limit=500');
      assert.is(feed.status, 200);
      const foreign = (feed.body.items as { orderId?: string }[]).filter(
        (e) => e.orderId && jobs.some((j) => j.apiId === e.orderId && j.brand !== brands[0]!.id),
      );
      assert.equal(foreign, [], "the feed holds another brand's order");
    }),
    { numRuns: RUNS, ...replay },
  );
});

test.run();
