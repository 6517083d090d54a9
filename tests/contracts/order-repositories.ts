// One behaviour per repository port of orders (jobs, invoices, cancellation reasons, order mappings): one part of the
// repository contract (repositories.ts).
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Account } from '../../domain/account.ts';
import { CancellationReason } from '../../domain/cancellation.ts';
import { Invoice } from '../../domain/invoice.ts';
import { Job } from '../../domain/job.ts';
import { OrderMapping } from '../../domain/order-mapping.ts';
import type { Repositories } from '../../domain/ports.ts';
import { account, at, job, type Run } from './samples.ts';

/** One behaviour per repository port of orders, held by the in-memory fake and the MikroORM adapter alike. */
export function orderRepositoryContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`order repository contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test('jobs: every field round-trips; order numbers are fresh and well-formed', async () => {
    const brand = account();
    const partner = account('partner');
    const j = job(brand.id, partner.id);
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.accounts.save(partner);
      await r.jobs.save(j);
    });
    const back = await run((r) => r.jobs.get(j.apiId));
    assert.instance(back, Job);
    assert.equal({ ...back }, { ...j });
    assert.is(await run((r) => r.jobs.get('no-such-job')), null);
    const numbers = await run(async (r) => [await r.jobs.nextOrderNumber(), await r.jobs.nextOrderNumber()]);
    assert.ok(numbers.every((n) => /^O-\d{10}$/.test(n)));
    assert.is.not(numbers[0], numbers[1]);
  });

  test('jobs: the jobs an identifier names among given partners, in apiId order; whether it names any', async () => {
    const brand = account();
    const p1 = account('partner');
    const p2 = account('partner');
    const tagged = (suffix: string, partner: Account, extra: Partial<Job>) =>
      new Job({ ...job(brand.id, partner.id), apiId: `job-${suffix}-${randomUUID()}`, ...extra });
    const name = `O-${randomUUID()}`;
    const [a, b, c, d] = [
      tagged('b', p1, { name, invoicingEid: `INV-${name}` }),
      tagged('a', p1, { name, extPartnerId: `P-${name}` }),
      tagged('c', p1, {}),
      tagged('d', p2, { name }),
    ];
    await run(async (r) => {
      for (const x of [brand, p1, p2]) await r.accounts.save(x);
      for (const j of [a, b, c, d]) await r.jobs.save(j);
    });
    const ids = async (
      identifier: Parameters<Repositories['jobs']['findByIdentifier']>[0],
      partners = [p1.id],
      limit = 10,
    ) => (await run((r) => r.jobs.findByIdentifier(identifier, partners, limit))).map((j) => j.apiId);
    assert.equal(await ids({ kind: 'gidOrderNumber', value: name }), [a.apiId, b.apiId].sort());
    assert.equal(
      await ids({ kind: 'gidOrderNumber', value: name }, [p1.id, p2.id]),
      [a.apiId, b.apiId, d.apiId].sort(),
    );
    assert.equal((await ids({ kind: 'gidOrderNumber', value: name }, [p1.id, p2.id], 2)).length, 2);
    assert.equal(await ids({ kind: 'gidOrderNumber', value: name }, [p2.id]), [d.apiId]);
    assert.equal(await ids({ kind: 'invoicingEid', value: `INV-${name}` }), [a.apiId]);
    assert.equal(await ids({ kind: 'yourOrderID', value: `P-${name}` }), [b.apiId]);
    assert.equal(await ids({ kind: 'jobApiId', value: c.apiId }, [p2.id]), []);
    assert.is(await run((r) => r.jobs.identifies({ kind: 'jobApiId', value: c.apiId })), true);
    assert.is(await run((r) => r.jobs.identifies({ kind: 'jobApiId', value: 'nothing' })), false);
  });

  test('invoices: saved comes back whole', async () => {
    const brand = account();
    const j = job(brand.id);
    const now = at('2026-03-01T00:00:00.000Z');
    const invoice = new Invoice({
      id: randomUUID(),
      orderId: j.apiId,
      number: 'R-1',
      type: 'invoice',
      status: 'sent',
      cancellationStatus: null,
      items: [{ description: 'Install', quantity: 1, unitPrice: 99.5, total: 99.5 }],
      createdAt: now,
      updatedAt: now,
    });
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.jobs.save(j);
      await r.invoices.save(invoice);
    });
    assert.equal({ ...(await run((r) => r.invoices.get(invoice.id))) }, { ...invoice });
  });

  test('cancellation reasons: the catalogue is seeded; save replaces by name', async () => {
    assert.is((await run((r) => r.cancellationReasons.get('CUSTOMER_WITHDREW')))?.outcome, 'cancelled');
    assert.is((await run((r) => r.cancellationReasons.get('CUSTOMER_UNREACHABLE')))?.outcome, 'pending');
    const name = `TEST_${randomUUID().slice(0, 8).toUpperCase()}`;
    await run((r) => r.cancellationReasons.save(new CancellationReason(name, 'pending')));
    await run((r) => r.cancellationReasons.save(new CancellationReason(name, 'cancelled')));
    assert.is((await run((r) => r.cancellationReasons.get(name)))?.outcome, 'cancelled');
    assert.is(await run((r) => r.cancellationReasons.get('NO_SUCH_REASON')), null);
  });

  test('order mappings: one per brand; save replaces', async () => {
    const brand = account();
    await run((r) => r.accounts.save(brand));
    const t = at('2026-01-01T00:00:00.000Z');
    await run((r) =>
      r.orderMappings.save(new OrderMapping(brand.id, [{ key: 'a', target: 'orderType', required: true }], t)),
    );
    await run((r) =>
      r.orderMappings.save(new OrderMapping(brand.id, [{ key: 'b', target: 'projectId', required: false }], t)),
    );
    assert.equal((await run((r) => r.orderMappings.get(brand.id)))?.fields, [
      { key: 'b', target: 'projectId', required: false },
    ]);
    assert.is(await run((r) => r.orderMappings.get(randomUUID())), null);
  });

  test.run();
}
