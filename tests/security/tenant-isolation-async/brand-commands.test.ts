import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type Account,
  account,
  app,
  get,
  type Json,
  outcomeOf,
  post,
  RUNS,
  replay,
  sql,
  withIsolationApp,
} from './support.ts';

// Brand commands on another brand's order (CONTRACT §5): see support.ts for the properties' common ground.
const test = suite('tenant isolation of brand commands');
withIsolationApp(test);

const word = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9-]{0,23}$/);
const customer = fc
  .record(
    {
      email: fc.stringMatching(/^[a-z0-9]{1,16}$/).map((w) => `${w}@example.com`),
      externalId: word,
      firstName: word,
      lastName: word,
      mobilePhone: fc.constant('+49 170 0000'),
      phone: word,
      salutation: fc.constantFrom('Mr', 'Ms', 'Mx'),
    },
    { requiredKeys: [] },
  )
  .filter((c) => Object.keys(c).length > 0);
const REASONS = [
  'CUSTOMER_WITHDREW',
  'DUPLICATE_ORDER',
  'OUTSIDE_SERVICE_AREA',
  'CUSTOMER_UNREACHABLE',
  'TECHNICAL_INFEASIBILITY',
] as const;
const TERMINAL = new Set(['cancelled', 'closed']);

const commandWorld = fc.record({
  brands: fc.array(fc.boolean(), { minLength: 2, maxLength: 3 }),
  jobs: fc.array(
    fc.record({
      owner: fc.nat(2),
      sender: fc.nat(1),
      partner: fc.constantFrom('none', 'master', 'child'),
      status: fc.constantFrom('new', 'accepted', 'started', 'brand_cancellation_pending', 'cancelled', 'closed'),
      reuseCid: fc.boolean(),
      customer,
      externalId: word,
      invoicingExternalId: word,
      reason: fc.constantFrom(...REASONS),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

type WorldJob = (typeof commandWorld extends fc.Arbitrary<infer T> ? T : never)['jobs'][number];
type OrderOfBrand = Omit<WorldJob, 'owner' | 'sender'> & {
  apiId: string;
  invoiceId: string;
  owner: Account;
  sender: Account;
  shared: { cid: string; result: Json } | null;
};

test("brand commands: another brand's order is not found and stays byte for byte as it was; _cids are per account; partners are 401", async () => {
  await fc.assert(
    fc.asyncProperty(commandWorld, async (w) => {
      const brands: Account[] = [];
      for (const config of w.brands) brands.push(await account('brand', null, config ? 'quiet' : 'none'));
      const master = await account('partner', null, 'quiet');
      const child = await account('partner', master.id, 'none');
      const jobs: OrderOfBrand[] = [];
      for (const j of w.jobs) {
        const owner = brands[j.owner % brands.length]!;
        const others = brands.filter((b) => b !== owner);
        const partnerId = j.partner === 'master' ? master.id : j.partner === 'child' ? child.id : null;
        const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', {
          brandAccountId: owner.id,
          partnerId,
          status: j.status,
        });
        const { id: invoiceId } = await app.admin.call<{ id: string }>('invoices.create', {
          orderId: apiId,
          number: `I-${apiId.slice(0, 8)}`,
          type: 'invoice',
          status: 'sent',
          items: [{ description: 'x', quantity: 1, unitPrice: 2, total: 2 }],
        });
        // A `_cid` the owner has used already: another account may use it too, as its own.
        let shared: { cid: string; result: Json } | null = null;
        if (j.reuseCid) {
          const cid = randomUUID();
          assert.is(
            (await post('/v3/commands', owner, { _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId }))
              .status,
            202,
          );
          const result = await outcomeOf(owner, cid);
          assert.equal([result._type, result.result], ['CommandResultEvent', { orderId: apiId }]);
          shared = { cid, result };
        }
        jobs.push({ ...j, apiId, invoiceId, owner, sender: others[j.sender % others.length]!, shared });
      }

      /**
       * Everything of the order that a command could touch: its poll as its owner, its row, its invoice, its events.
       */
      const stateOf = async (job: OrderOfBrand) => ({
        polled: (await get(`/v3/poll/job/*/${job.apiId}`, job.owner)).text,
        row: (await sql<{ r: string }>('select to_jsonb(j)::text as r from jobs j where api_id = ?', [job.apiId]))[0]
          ?.r,
        invoice: (
          await sql<{ r: string }>('select to_jsonb(i)::text as r from invoices i where id::text = ?', [job.invoiceId])
        )[0]?.r,
        events: (await sql<{ n: string }>('select count(*)::text as n from events where order_id = ?', [job.apiId]))[0]
          ?.n,
      });
      const before: Awaited<ReturnType<typeof stateOf>>[] = [];
      for (const job of jobs) {
        const state = await stateOf(job);
        assert.ok(
          state.row && state.invoice && JSON.parse(state.polled).orderId === job.apiId,
          'the owner reads its order',
        );
        before.push(state);
      }

      // A partner token on POST /v3/commands: 401, nothing stored (its _cid is unknown to it afterwards).
      for (const partner of [master, child]) {
        const cid = randomUUID();
        const refused = await post('/v3/commands', partner, {
          _v: '1.0.0',
          _cid: cid,
          _type: 'UpdateOrderExternalId',
          orderId: jobs[0]!.apiId,
          externalId: 'by-a-partner',
        });
        assert.equal(
          [refused.status, refused.body.code],
          [401, 'UNAUTHORIZED'],
          'a partner token on POST /v3/commands',
        );
        assert.is((await get(`/v3/commands/${cid}`, partner)).status, 404, 'a refused command is not stored');
      }

      // Every order-addressed command, from another brand.
      const sent: { sender: Account; cid: string; type: string; code: string; job: OrderOfBrand }[] = [];
      for (const job of jobs) {
        const bodies: [string, Json, string][] = [
          ['RefreshOrder', { orderId: job.apiId }, 'ORDER_NOT_FOUND'],
          // Invoice-addressed: the invoice of another brand's order is not found (CONTRACT §3 INVOICE_NOT_FOUND).
          ['RefreshInvoice', { invoiceId: job.invoiceId }, 'INVOICE_NOT_FOUND'],
          ['UpdateCustomer', { orderId: job.apiId, customer: job.customer }, 'ORDER_NOT_FOUND'],
          ['UpdateOrderExternalId', { orderId: job.apiId, externalId: job.externalId }, 'ORDER_NOT_FOUND'],
          [
            'UpdateOrderInvoicingExternalId',
            { orderId: job.apiId, invoicingExternalId: job.invoicingExternalId },
            'ORDER_NOT_FOUND',
          ],
          ['ApplyCancellation', { orderId: job.apiId, cancellationReason: job.reason }, 'ORDER_NOT_FOUND'],
        ];
        for (const [type, fields, code] of bodies) {
          const cid = type === 'RefreshOrder' && job.shared ? job.shared.cid : randomUUID();
          const res = await post('/v3/commands', job.sender, { _v: '1.0.0', _cid: cid, _type: type, ...fields });
          assert.is(res.status, 202, `${type} on another brand's order: ${JSON.stringify(res.body)}`);
          assert.equal(res.body, { _cid: cid, _type: type, status: 'accepted' });
          sent.push({ sender: job.sender, cid, type, code, job });
        }
      }
      for (const s of sent) {
        const outcome = await outcomeOf(s.sender, s.cid);
        assert.equal(
          [outcome._type, outcome.code, outcome.commandType, outcome._cid, outcome.details],
          ['CommandErrorEvent', s.code, s.type, s.cid, null],
          `${s.type} on ${s.job.apiId} of another brand (status ${s.job.status}): ${JSON.stringify(outcome)}`,
        );
        // The sender's outcome is its own: neither the order's owner nor a partner reads it (tenant-isolation.test.ts
        // covers every pair of accounts); the owner of a shared _cid reads its own result under it.
        for (const other of [s.job.owner, s.job.partner === 'child' ? child : master]) {
          const res = await get(`/v3/commands/${s.cid}`, other);
          if (other === s.job.owner && s.job.shared?.cid === s.cid)
            assert.equal(
              [res.status, res.body],
              [200, s.job.shared.result],
              "the owner's own result under the shared _cid",
            );
          else assert.is(res.status, 404, "another account's command result");
        }
      }

      for (const [i, job] of jobs.entries())
        assert.equal(
          await stateOf(job),
          before[i],
          `${job.apiId} of another brand is unchanged, and no event was written for it`,
        );

      // The same kind of command from the owner does change it: the comparison above can tell.
      const target = jobs.find((j) => !TERMINAL.has(j.status));
      const control = target ?? jobs[0]!;
      const cid = randomUUID();
      const body = target
        ? {
            _v: '1.0.0',
            _cid: cid,
            _type: 'UpdateOrderExternalId',
            orderId: control.apiId,
            externalId: `own-${cid.slice(0, 8)}`,
          }
        : { _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: control.apiId };
      assert.is((await post('/v3/commands', control.owner, body)).status, 202);
      assert.is((await outcomeOf(control.owner, cid))._type, 'CommandResultEvent', "the owner's command succeeds");
      const after = await stateOf(control);
      assert.is(
        Number(after.events),
        Number(before[jobs.indexOf(control)]!.events) + (target && control.partner !== 'none' ? 2 : 1),
      );
      if (target) assert.is.not(after.polled, before[jobs.indexOf(control)]!.polled);
    }),
    { numRuns: RUNS, includeErrorInReport: true, ...replay },
  );
});

// ---------------------------------------------------------------------------------------------------------------
// 2. Webhook configuration self-service: GET, PUT and the endpoint test address the caller's own, nothing else.

test.run();
