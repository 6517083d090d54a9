import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { deliverDueEvents } from '../../server/worker/delivery-round.ts';
import { ROUND_PACE } from '../../server/worker/delivery-round-types.ts';
import { WorkSignal } from '../../server/worker/wake-up-signal.ts';
import { fakeDeps } from '../fakes.ts';
import { brandWithEndpoint, POLICY, quiet } from './delivery-round-support.ts';

// A claim that looks for new deliveries positions the feed's new events first, a statement's worth of work even when
// there are none: a busy round looks when deliveries were announced, not before every claim.
const test = suite('the delivery round: when a claim looks for new deliveries');

test('a busy round looks after an announcement or a wait, and claims from the queue otherwise', async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'b');
  for (let i = 0; i < 12; i++) await createJob(deps, { brandAccountId: brand.id });
  const send = deps.webhookSender.send.bind(deps.webhookSender);
  deps.webhookSender.send = async (request) => {
    await new Promise((resolve) => setTimeout(resolve, 3));
    return send(request);
  };
  const signal = new WorkSignal();
  const seen: string[] = [];
  const claimDue = deps.deliveryQueue.claimDue.bind(deps.deliveryQueue);
  deps.deliveryQueue.claimDue = async (request) => {
    seen.push(request.lookForNew ? 'look' : 'queued');
    // Announced while this claim is under way (its look, if any, may have begun before the commit): the next looks.
    if (seen.filter((s) => s !== 'wait' && s !== 'announced').length === 2) {
      signal.wake(['deliveries']);
      seen.push('announced');
    }
    return claimDue(request);
  };
  const started = performance.now();
  await deliverDueEvents(
    deps,
    POLICY,
    quiet({
      announced: () => signal.take('deliveries'),
      waitForWork: async () => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        seen.push('wait'); // over
      },
    }),
  );
  const tookMs = performance.now() - started;
  assert.is(deps.webhookSender.sent.length, 12, 'every delivery sent');
  const claims = seen.filter((s) => s === 'look' || s === 'queued');
  assert.is(claims[0], 'look', 'the first claim looks');
  const afterAnnouncement = seen[seen.indexOf('announced') + 1];
  assert.is(afterAnnouncement, 'look', `the claim after an announcement looks: ${seen.join(' ')}`);
  if (tookMs < ROUND_PACE.lookEveryMs) {
    // Every look has its reason: the start, an announcement or a wait just before it.
    const unexplained = seen.filter((s, i) => s === 'look' && i > 0 && !['announced', 'wait'].includes(seen[i - 1]!));
    assert.equal(unexplained, [], seen.join(' '));
    assert.ok(claims.includes('queued'), `some claims only claim from the queue: ${seen.join(' ')}`);
  }
});

test('an announcement is taken once: by the wait or by the round that asks', async () => {
  const signal = new WorkSignal();
  assert.is(signal.take('deliveries'), false);
  signal.wake(['deliveries']);
  assert.is(signal.take('commands'), false, 'another kind of work');
  assert.is(signal.take('deliveries'), true);
  assert.is(signal.take('deliveries'), false, 'taken');
  signal.wake(['deliveries']);
  await signal.wait('deliveries', 10_000); // at once: it was pending
  assert.is(signal.take('deliveries'), false, 'the wait took it');
});

test.run();
