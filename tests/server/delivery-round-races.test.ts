import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DomainError } from '../../domain/errors.ts';
import { eventFor, receiverOf } from '../../domain/receivers.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { deliverDueEvents } from '../../server/worker/delivery-round.ts';
import { withSafePorts } from '../../server/worker/safe-ports.ts';
import { fakeDeps, ScriptedWebhookSender } from '../fakes.ts';
import { brandWithEndpoint, POLICY, quiet } from './delivery-round-support.ts';

// The worker's delivery round on the fakes when its steps overlap (a claim answered after a record), and when what it
// reports to, or waits with, fails.
const test = suite('the delivery round: overlapping steps, failing reports and waits');

/** The unhandled rejections while `run` runs and a moment after it. */
async function unhandledWhile(run: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const listener = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', listener);
  try {
    await run();
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.off('unhandledRejection', listener);
  }
  return unhandled;
}

test('a failure told to a logger that throws: no unhandled rejection, and the round goes on', async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'b');
  for (let i = 0; i < 3; i++) await createJob(deps, { brandAccountId: brand.id });
  let sends = 0;
  const send = deps.webhookSender.send.bind(deps.webhookSender);
  deps.webhookSender.send = async (request) => {
    if (++sends === 1) throw new Error('the sender broke');
    return send(request);
  };
  deps.deliveryQueue.record = async () => {
    throw new Error('the store refused the batch');
  };
  const steps: string[] = [];
  const ports = quiet({
    waitForWork: async () => {},
    stepFailed: (step) => {
      steps.push(step);
      throw new Error('the logger broke');
    },
  });
  assert.equal(await unhandledWhile(() => deliverDueEvents(deps, POLICY, ports)), []);
  assert.ok(steps.includes('send') && steps.includes('record'), steps.join(', '));
  assert.is(sends, 3, 'every claimed delivery was sent');
});

test('an attempt and a notice told to a logger that throws: no failed send reported, the mail goes out', async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'b');
  await createContact(deps, { accountId: brand.id, email: 'ops@example.com', apiAccess: true });
  await createJob(deps, { brandAccountId: brand.id });
  deps.webhookSender = new ScriptedWebhookSender(deps.clock, () => 500);
  const mailed: string[] = [];
  deps.mailer.send = async (message) => {
    mailed.push(message.to);
  };
  const [steps, reports] = [[] as string[], [] as string[]];
  const ports = quiet({
    waitForWork: async () => {},
    attempted: () => {
      reports.push('attempted');
      throw new Error('the logger broke');
    },
    noticed: () => {
      reports.push('noticed');
      throw new Error('the logger broke');
    },
    stepFailed: (step) => {
      steps.push(step);
    },
  });
  const policy = { ...POLICY, scheduleMs: [], disableAfterMs: 0 };
  assert.equal(await unhandledWhile(() => deliverDueEvents(deps, policy, ports)), []);
  assert.equal(reports, ['attempted', 'noticed']);
  assert.equal(steps, [], 'a report that threw is not a step that failed');
  assert.equal(mailed, ['ops@example.com'], "the endpoint's contact is told it was disabled");
  assert.is((await deps.webhookConfigs.find(brand.id, 'brand'))?.enabled, false);
});

test('a wait that rejects is waited out: no unhandled rejection, and what was due is sent and recorded', async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'b');
  for (let i = 0; i < 3; i++) await createJob(deps, { brandAccountId: brand.id });
  const record = deps.deliveryQueue.record.bind(deps.deliveryQueue);
  let records = 0;
  deps.deliveryQueue.record = async (...args) => {
    if (++records === 1) throw new DomainError('UNAVAILABLE', 'the database is away');
    return record(...args);
  };
  // One send takes 200 ms: meanwhile the round has claimed all there is, and watches for work.
  const send = deps.webhookSender.send.bind(deps.webhookSender);
  let sends = 0;
  deps.webhookSender.send = async (request) => {
    if (++sends === 1) await new Promise((resolve) => setTimeout(resolve, 200));
    return send(request);
  };
  const claimDue = deps.deliveryQueue.claimDue.bind(deps.deliveryQueue);
  let claims = 0;
  deps.deliveryQueue.claimDue = (request) => {
    claims++;
    return claimDue(request);
  };
  const waits: string[] = [];
  const ports = quiet({
    // A round that spins would never let the slow send's timer fire: it is stopped, and the count tells.
    stopping: () => claims > 200,
    waitForWork: async (ms) => {
      waits.push(`work ${ms}`);
      throw new Error('the wake-up channel broke');
    },
    pause: async (ms) => {
      waits.push(`pause ${ms}`);
      throw new Error('the timer broke');
    },
  });
  assert.equal(await unhandledWhile(() => deliverDueEvents(deps, POLICY, ports)), []);
  assert.ok(waits.includes('pause 1000'), waits.join(', '));
  // The watch for work failing each time, during the slow send and the record's backoff (1 s): claims at the watch's
  // pace (50 ms), not in a spin.
  assert.ok(claims < 60, `${claims} claims`);
  const log = await deps.deliveryLog.list({ limit: 10 });
  assert.equal(
    log.map((d) => d.status),
    ['delivered', 'delivered', 'delivered'],
  );
});

test('a claim answered short after a record freed the next of its order is not taken as drained', async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'freed');
  const receiver = await receiverOf(deps, brand.id, 'brand');
  // Order a's first event, order b's, then order a's second (which waits for the first's outcome).
  const orderOf = ['order-a', 'order-b', 'order-a'];
  await deps.events.add(
    orderOf.map((order, n) =>
      eventFor(deps, receiver, 'OrderStatusEvent', order, (eid, format) => ({
        _eid: eid,
        _type: 'x',
        _v: format.version,
        n,
      })),
    ),
  );
  const gate = () => {
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { open, opened };
  };
  const [records, bSend] = [gate(), gate()];
  const record = deps.deliveryQueue.record.bind(deps.deliveryQueue);
  let recordsDone = 0;
  deps.deliveryQueue.record = async (...args) => {
    await records.opened;
    const notices = await record(...args);
    recordsDone++;
    return notices;
  };
  const claimDue = deps.deliveryQueue.claimDue.bind(deps.deliveryQueue);
  const claimed: number[][] = [];
  deps.deliveryQueue.claimDue = async (request) => {
    const got = await claimDue(request);
    if (claimed.length === 1) {
      // Read before the first outcome's record, answered after it: the record frees order a's second event meanwhile.
      records.open();
      for (let i = 0; i < 2000 && recordsDone === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    claimed.push(got.map((d) => JSON.parse(d.body).n as number));
    return got;
  };
  const send = deps.webhookSender.send.bind(deps.webhookSender);
  deps.webhookSender.send = async (request) => {
    if (JSON.parse(request.body).n === 1) await bSend.opened;
    return send(request);
  };
  // No wake-up and no poll: what the round claims next it claims because it knows deliveries were freed.
  const round = deliverDueEvents(
    deps,
    { ...POLICY, maxInFlight: 1, maxInFlightPerEndpoint: 1 },
    quiet({ waitForWork: () => new Promise(() => {}) }),
  );
  for (let i = 0; i < 1000 && claimed.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 2));
  const whileBWasSent = claimed.map((n) => [...n]);
  bSend.open();
  await round;
  assert.equal(whileBWasSent, [[0, 1], [], [2]], "order a's second event claimed while b's send is under way");
});

test("when stopping, a wait ends at once: one begun after the stop, and a failed wait's timer", async () => {
  let stopping = false;
  const called: string[] = [];
  const ports = withSafePorts(
    quiet({
      stopping: () => stopping,
      pause: async (ms) => {
        called.push(`pause ${ms}`);
        throw new Error('the timer broke');
      },
      waitForWork: async (ms) => {
        called.push(`work ${ms}`);
      },
    }),
  );
  const backoff = ports.pause(60_000);
  await new Promise((resolve) => setTimeout(resolve, 20));
  stopping = true;
  const ended = await Promise.race([
    backoff.then(() => 'ended'),
    new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting after 5 s of its 60').unref()),
  ]);
  assert.is(ended, 'ended', "the failed pause's timer ends with the stop");
  await ports.pause(60_000);
  await ports.waitForWork(60_000);
  assert.equal(called, ['pause 60000'], 'begun while stopping: not waited at all');
});

test.run();
