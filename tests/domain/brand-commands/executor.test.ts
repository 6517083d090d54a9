import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BrandCommand } from '../../../domain/command.ts';
import { DomainError } from '../../../domain/errors.ts';
import { acceptCommand } from '../../../domain/use-cases/accept-command.ts';
import { claimDueCommands } from '../../../domain/use-cases/claim-due-commands.ts';
import { createInvoice } from '../../../domain/use-cases/create-invoice.ts';
import { createJob } from '../../../domain/use-cases/create-job.ts';
import { executeCommand, executeCommands, type RunInUnit } from '../../../domain/use-cases/execute-command.ts';
import { pollCommandResult } from '../../../domain/use-cases/poll-command-result.ts';
import { purgeCommandResults } from '../../../domain/use-cases/purge-command-results.ts';
import { type FakeDeps, fakeDeps } from '../../fakes.ts';
import { rejectsWith } from '../helpers.ts';
import { envelope, world } from './support.ts';

// The executor of brand commands: accepted, claimed, run once, retried or given up, its result polled and purged;
// a batch's locks and order.
const test = suite('brand commands on the pure domain: the executor');

/** Runs work directly on the fakes: no rollback here, which the executor's story does not need for these cases. */
const direct =
  (deps: FakeDeps): RunInUnit =>
  (work) =>
    work(deps);
const principal = (accountId: string) => ({ accountId, contactId: 'c', role: 'brand' as const });

test('the executor: accepted → run once → result polled; a failure becomes a CommandErrorEvent; replays run nothing', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const command = { ...envelope('RefreshOrder', 'x-1'), orderId: job.apiId } as BrandCommand;
  assert.equal(await acceptCommand(deps, principal(brand.id), command), {
    _cid: 'x-1',
    _type: 'RefreshOrder',
    status: 'accepted',
  });
  assert.is(await pollCommandResult(deps, principal(brand.id), 'x-1'), null);
  const [claimed] = await claimDueCommands(deps, 10, 60_000);
  assert.equal(await executeCommand(direct(deps), claimed!, { maxAttempts: 3, retryDelayMs: 1000 }), {
    outcome: 'succeeded',
  });
  const result = await pollCommandResult(deps, principal(brand.id), 'x-1');
  assert.equal(
    { ...result, _eid: undefined },
    {
      _eid: undefined,
      _type: 'CommandResultEvent',
      _v: '1.1.0',
      _cid: 'x-1',
      commandType: 'RefreshOrder',
      _metadata: {},
      result: { orderId: job.apiId },
    },
  );
  assert.ok(
    deps.events.stored.some(
      (e) => e.type === 'CommandResultEvent' && e.payload._eid === result!._eid && e.accountId === brand.id,
    ),
  );
  assert.equal(await claimDueCommands(deps, 10, 60_000), [], 'nothing left');
  assert.equal(await acceptCommand(deps, principal(brand.id), command), {
    _cid: 'x-1',
    _type: 'RefreshOrder',
    status: 'accepted',
  });
  await rejectsWith(
    acceptCommand(deps, principal(brand.id), { ...command, orderId: 'other' } as BrandCommand),
    'CONFLICT',
  );
  await rejectsWith(pollCommandResult(deps, principal('someone-else'), 'x-1'), 'NOT_FOUND');

  await acceptCommand(deps, principal(brand.id), {
    ...envelope('RefreshOrder', 'x-2'),
    _metadata: { 'ext-ref': 'r' },
    orderId: 'missing',
  } as BrandCommand);
  const [second] = await claimDueCommands(deps, 10, 60_000);
  assert.equal(await executeCommand(direct(deps), second!, { maxAttempts: 3, retryDelayMs: 1000 }), {
    outcome: 'failed',
    code: 'ORDER_NOT_FOUND',
  });
  const failed = await pollCommandResult(deps, principal(brand.id), 'x-2');
  assert.equal(
    [failed?._type, failed?.code, failed?.details, failed?._metadata],
    ['CommandErrorEvent', 'ORDER_NOT_FOUND', null, { 'ext-ref': 'r' }],
  );
});

test('the executor: the database away never ends a command nor uses up its attempts; it waits and runs once it is back', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const away: FakeDeps = {
    ...deps,
    jobs: Object.assign(Object.create(deps.jobs), {
      getForChange: async () => {
        throw new DomainError('UNAVAILABLE', 'away', [], 5);
      },
    }),
  };
  const broken: FakeDeps = {
    ...deps,
    jobs: Object.assign(Object.create(deps.jobs), {
      getForChange: async () => {
        throw new Error('a fault of ours');
      },
    }),
  };
  await acceptCommand(deps, principal(brand.id), {
    ...envelope('RefreshOrder', 'u-1'),
    orderId: job.apiId,
  } as BrandCommand);
  const policy = { maxAttempts: 2, retryDelayMs: 5000 };
  for (let outage = 1; outage <= 3; outage++) {
    const [claimed] = await claimDueCommands(deps, 10, 60_000);
    assert.is(claimed!.attempts, 1, `claim ${outage}: an outage used no attempt`);
    assert.is(
      (await executeCommand(direct(away), claimed!, policy)).outcome,
      'retry',
      `claim ${outage}: no INTERNAL_ERROR for an outage`,
    );
    deps.clock.advance(5);
  }
  // Its first real attempt fails unexpectedly: with 2 attempts, it is tried again, not given up.
  const [faulty] = await claimDueCommands(deps, 10, 60_000);
  assert.is((await executeCommand(direct(broken), faulty!, policy)).outcome, 'retry');
  deps.clock.advance(5);
  const [back] = await claimDueCommands(deps, 10, 60_000);
  assert.is(back!.attempts, 2);
  assert.is((await executeCommand(direct(deps), back!, policy)).outcome, 'succeeded');
  assert.is((await pollCommandResult(deps, principal(brand.id), 'u-1'))?._type, 'CommandResultEvent');
});

test('the executor: an unexpected failure is retried, then ends as INTERNAL_ERROR without its text; results go after 24 h', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const broken: FakeDeps = {
    ...deps,
    jobs: Object.assign(Object.create(deps.jobs), {
      getForChange: async () => {
        throw new Error('db-primary.internal:5432 timed out');
      },
    }),
  };
  await acceptCommand(deps, principal(brand.id), {
    ...envelope('RefreshOrder', 'y-1'),
    orderId: job.apiId,
  } as BrandCommand);
  const policy = { maxAttempts: 2, retryDelayMs: 5000 };
  const [first] = await claimDueCommands(deps, 10, 60_000);
  const retry = await executeCommand(direct(broken), first!, policy);
  assert.is(retry.outcome, 'retry');
  assert.equal(await claimDueCommands(deps, 10, 60_000), [], 'not before the retry delay');
  deps.clock.advance(5);
  const [again] = await claimDueCommands(deps, 10, 60_000);
  assert.is(again!.attempts, 2);
  assert.is((await executeCommand(direct(broken), again!, policy)).outcome, 'gave up');
  const result = await pollCommandResult(deps, principal(brand.id), 'y-1');
  assert.equal(
    [result?.code, result?.message],
    ['INTERNAL_ERROR', 'The command could not be executed because of an internal error.'],
  );
  assert.not.match(JSON.stringify(result), /db-primary|5432/);

  deps.clock.advance(24 * 3600 - 1);
  assert.ok(await pollCommandResult(deps, principal(brand.id), 'y-1'));
  assert.is(await purgeCommandResults(deps, 100), 0, 'a result younger than 24 h is not purged');
  assert.is((await deps.commands.result(brand.id, 'y-1'))?.status, 'failed');
  deps.clock.advance(1);
  await rejectsWith(pollCommandResult(deps, principal(brand.id), 'y-1'), 'NOT_FOUND');
  assert.is(await purgeCommandResults(deps, 100), 1);
  assert.is(await deps.commands.result(brand.id, 'y-1'), null);
});

test("a batch locks every order it changes first, its invoice's included (two batches would deadlock otherwise), then runs in acceptance order", async () => {
  const deps = fakeDeps();
  const { brand } = await world(deps);
  const [low, high, billed] = [
    await createJob(deps, { brandAccountId: brand.id }),
    await createJob(deps, { brandAccountId: brand.id }),
    await createJob(deps, { brandAccountId: brand.id }),
  ];
  const invoice = await createInvoice(deps, {
    orderId: billed!.apiId,
    number: 'R-9',
    type: 'invoice',
    status: 'sent',
    items: [],
  });
  const sent = [
    { ...envelope('UpdateOrderExternalId', 'b-1'), orderId: high!.apiId, externalId: 'first' },
    { ...envelope('RefreshInvoice', 'b-2'), invoiceId: invoice.id },
    { ...envelope('RefreshOrder', 'b-3'), orderId: low!.apiId },
    { ...envelope('UpdateOrderExternalId', 'b-4'), orderId: high!.apiId, externalId: 'second' },
  ] as BrandCommand[];
  for (const command of sent) await acceptCommand(deps, principal(brand.id), command);
  const taken: string[] = [];
  const jobs = Object.assign(Object.create(deps.jobs), {
    lockForChange: async (apiIds: readonly string[]) => {
      taken.push(`all:${[...apiIds].sort().join(',')}`);
    },
    getForChange: (apiId: string) => {
      taken.push(apiId);
      return deps.jobs.getForChange(apiId);
    },
  });
  const claimed = await claimDueCommands(deps, 10, 60_000);
  assert.equal(
    claimed.map((c) => c.cid),
    ['b-1', 'b-2', 'b-3', 'b-4'],
    'claimed in acceptance order',
  );
  const executions = await executeCommands(direct({ ...deps, jobs }), claimed, { maxAttempts: 3, retryDelayMs: 1000 });
  assert.equal(taken, [
    `all:${[low!.apiId, high!.apiId, billed!.apiId].sort().join(',')}`,
    high!.apiId,
    billed!.apiId,
    low!.apiId,
    high!.apiId,
  ]);
  assert.equal(
    executions.map((e) => e.outcome),
    ['succeeded', 'succeeded', 'succeeded', 'succeeded'],
  );
  assert.is((await deps.jobs.get(high!.apiId))?.eid, 'second', 'the later change of one order last');
});

test("each command's work runs within the caller's around (its trace), batched or alone, with its events", async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  for (const [cid, orderId] of [
    ['t-1', job.apiId],
    ['t-2', job.apiId],
    ['t-3', 'no-such-order'],
  ] as const) {
    await acceptCommand(deps, principal(brand.id), { ...envelope('RefreshOrder', cid), orderId } as BrandCommand);
  }
  let inside: string | null = null;
  const wrapped: string[] = [];
  const emittedWithin: (string | null)[] = [];
  const add = deps.events.add.bind(deps.events);
  deps.events.add = async (events) => {
    for (const _ of events) emittedWithin.push(inside);
    return add(events);
  };
  const around = async <T>(claimed: { cid: string }, work: () => Promise<T>) => {
    wrapped.push(claimed.cid);
    inside = claimed.cid;
    try {
      return await work();
    } finally {
      inside = null;
    }
  };
  const policy = { maxAttempts: 3, retryDelayMs: 1000 };
  const [first, second, failing] = await claimDueCommands(deps, 10, 60_000);
  await executeCommands(direct(deps), [first!, second!], policy, { around });
  assert.equal(wrapped, ['t-1', 't-2'], 'a batch: each command within its own');
  assert.ok(emittedWithin.length >= 2, 'events emitted');
  assert.equal([...new Set(emittedWithin)], ['t-1', 't-2'], 'every event emitted within its own command');
  assert.equal(await executeCommands(direct(deps), [failing!], policy, { around }), [
    { outcome: 'failed', code: 'ORDER_NOT_FOUND' },
  ]);
  assert.equal(wrapped.at(-1), 't-3', 'alone, failing: within its own too');
  assert.equal(emittedWithin.at(-1), 't-3', 'its CommandErrorEvent as well');
});

test.run();
