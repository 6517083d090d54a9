import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { integrator } from '../../support/integrators.ts';
import { startReceiver } from '../../support/receiver.ts';
import { app, configure, createJob, get, type Json, post, setStatus, withSelfServiceApp } from './support.ts';

// The delivery log (GET /v3/webhook-deliveries) and its replay: every attempt logged, failed deliveries sent again.
const test = suite('integrator self-service: delivery log and replay');
withSelfServiceApp(test);

/** A receiver that fails until told otherwise. */
async function flakyReceiver() {
  let healthy = false;
  const receiver = await startReceiver(() => (healthy ? 200 : 503));
  return {
    ...receiver,
    recover: () => {
      healthy = true;
    },
  };
}

test('delivery log and replay: every attempt is logged; after recovery, redeliver-failed sends every failed event, in order per order', async () => {
  const receiver = await flakyReceiver();
  const brand = await integrator(app, 'brand');
  const stranger = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', receiver.url('/brand'));
  await configure(stranger.accountId, 'brand', null);
  const since = new Date(Date.now() - 60_000).toISOString();
  const orders = [await createJob(brand.accountId), await createJob(brand.accountId)];
  for (const status of ['open', 'accepted', 'started']) for (const apiId of orders) await setStatus(apiId, status);

  // Two durable attempts each (WEBHOOK_RETRY_SCHEDULE has one retry; a 503 waits for it like any answer), each logged,
  // then failed.
  let log: Json[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await get('/v3/webhook-deliveries?status=failed&limit=100', brand.accessToken);
    assert.is(res.status, 200);
    log = res.body.items;
    if (log.length === 8) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.is(log.length, 8, 'every event failed');
  for (const d of log) {
    assert.is(d.attempts.length, 2, 'two attempts, each one request');
    assert.ok(d.attempts.every((a: Json) => a.statusCode === 503));
    assert.match(d.attempts[0].error, /503/);
    assert.is(d.url, receiver.url('/brand'));
  }
  const paged = await get('/v3/webhook-deliveries?limit=3', brand.accessToken);
  assert.is(paged.body.items.length, 3);
  const rest = await get(
    `/v3/webhook-deliveries?limit=100&before=${encodeURIComponent(paged.body.next)}`,
    brand.accessToken,
  );
  assert.equal(
    [...paged.body.items, ...rest.body.items].map((d: Json) => d.id),
    (await get('/v3/webhook-deliveries?limit=100', brand.accessToken)).body.items.map((d: Json) => d.id),
  );
  assert.is(rest.body.next, null, 'the last page');

  const foreign = await post(`/v3/webhook-deliveries/${log[0]!.id}/redeliver`, stranger.accessToken);
  assert.is(foreign.status, 404, "another endpoint's delivery does not exist for the caller");
  assert.is((await get('/v3/webhook-deliveries', stranger.accessToken)).body.items.length, 0);

  receiver.recover();
  const before = receiver.received.length;
  const replay = await post('/v3/webhook-deliveries/redeliver-failed', brand.accessToken, { since });
  assert.is(replay.status, 202);
  assert.equal(replay.body, { count: 8 });
  await receiver.until((r) => r.slice(before).filter((x) => x.answered === 200).length === 8);
  for (const apiId of orders) {
    const statuses = receiver.received
      .slice(before)
      .filter((x) => x.payload.orderId === apiId)
      .map((x) => x.payload.status);
    assert.equal(statuses, ['new', 'open', 'accepted', 'started'], 'in the order of the changes');
  }
  // An attempt is recorded just after the receiver has answered it.
  let delivered: Json[] = [];
  for (let i = 0; i < 100 && delivered.length < 8; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    delivered = (await get('/v3/webhook-deliveries?status=delivered', brand.accessToken)).body.items;
  }
  assert.is(delivered.length, 8);
  assert.ok(
    delivered.every(
      (d: Json) => d.attempts.length >= 3 && d.attempts.at(-1).statusCode === 200 && d.attempts[0].statusCode === 503,
    ),
    'the attempts continue',
  );

  const again = await post(`/v3/webhook-deliveries/${log[0]!.id}/redeliver`, brand.accessToken);
  assert.is(again.status, 202);
  assert.equal(again.body, { id: log[0]!.id, status: 'pending' });
  const sentBefore = receiver.received.filter((x) => x.headers['webhook-id'] === log[0]!.eventId).length;
  await receiver.until((r) => r.filter((x) => x.headers['webhook-id'] === log[0]!.eventId).length === sentBefore + 1);
  assert.is((await post(`/v3/webhook-deliveries/${randomUUID()}/redeliver`, brand.accessToken)).status, 404);
  assert.is(
    (await post('/v3/webhook-deliveries/redeliver-failed', brand.accessToken, { since: 'yesterday' })).status,
    400,
  );
});

test.run();
