import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimDueCommands } from '../../domain/use-cases/claim-due-commands.ts';
import { ADMIN_TOKEN } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

const test = suite('GET /metrics');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;

test.before(async () => {
  app = await appWithMailbox();
  app.worker.start();
});
test.after(() => app.worker.stop());

async function scrape() {
  const res = await app.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`);
  assert.is(res.status, 200);
  assert.match(res.headers['content-type'] ?? '', /^text\/plain/);
  return res.text;
}
/** The value of one series (0 when it is not there yet). */
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

test('without the admin token: 401 problem', async () => {
  for (const auth of [undefined, 'Bearer wrong-token-0123456789', `Basic ${ADMIN_TOKEN}`]) {
    const req = app.http.get('/metrics');
    const res = await (auth ? req.set('authorization', auth) : req);
    assert.is(res.status, 401);
    assert.is(res.body.code ?? JSON.parse(res.text).code, 'UNAUTHORIZED');
  }
});

test('the counters move after a command and a delivery; the gauges are there', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url('/m'),
    transformer: 'default',
    version: '1.3.0',
  });
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  await receiver.until((r) => r.some((x) => x.payload.orderId === apiId));
  const before = await scrape();

  const cid = randomUUID();
  const sent = await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId });
  assert.is(sent.status, 202);
  await receiver.until(
    (r) => r.filter((x) => x.payload.orderId === apiId).length >= 2 && r.some((x) => x.payload._cid === cid),
  );
  let after = '';
  for (let i = 0; i < 50; i++) {
    after = await scrape();
    if (
      value(after, 'webhook_deliveries_total{outcome="delivered"}') >=
      value(before, 'webhook_deliveries_total{outcome="delivered"}') + 2
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const moved = (series: string, by = 1) =>
    assert.ok(
      value(after, series) >= value(before, series) + by,
      `${series}: ${value(before, series)} → ${value(after, series)}`,
    );
  moved('http_requests_total{method="POST",route="/v3/commands",status="202"}');
  moved('commands_executed_total{outcome="succeeded"}');
  moved('webhook_deliveries_total{outcome="delivered"}', 2);
  moved('webhook_delivery_lag_seconds_count', 2);
  const lagSum = value(after, 'webhook_delivery_lag_seconds_sum') - value(before, 'webhook_delivery_lag_seconds_sum');
  assert.ok(lagSum > 0 && lagSum < 30, `the lags are seconds from the change to the 2xx (${lagSum})`);
  assert.is(value(after, 'queue_stats_up'), 1);
  assert.ok(
    value(after, 'http_requests_total{method="POST",route="/trpc/admin.jobs.create",status="200"}') >= 1,
    'a procedure is its own route',
  );
  for (const series of [
    'commands{state="accepted"}',
    'webhook_deliveries_pending',
    'webhook_deliveries_oldest_pending_age_seconds',
    'commands_oldest_accepted_age_seconds',
    'db_pool_connections{state="max"}',
    'nodejs_eventloop_lag_seconds',
  ]) {
    assert.ok(
      after.split('\n').some((l) => l.startsWith(`${series} `)),
      `${series} is reported`,
    );
  }
  assert.ok(value(after, 'db_pool_connections{state="max"}') >= 1);
  await app.http.get(`/no/such/${randomUUID()}`);
  assert.not.match(await scrape(), /no\/such/, 'unknown paths are not series of their own');
});

// Last: it stops this suite's worker, so that the command waits, and then holds it as an executor would.
test('commands{state}: accepted while a command waits for an executor, running while one holds it', async () => {
  await app.worker.stop();
  const brand = await integrator(app, 'brand');
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  const cid = randomUUID();
  const sent = await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId });
  assert.is(sent.status, 202);
  // The queue gauges are read at most every 2 s, whatever the scrape rate.
  const fresh = async () => {
    await new Promise((resolve) => setTimeout(resolve, 2100));
    return scrape();
  };
  const waiting = await fresh();
  assert.ok(value(waiting, 'commands{state="accepted"}') >= 1, 'the command waits');
  // Held for 10 s only: an executor of another suite on the same database runs it afterwards.
  const claimed = await app.services.unitOfWork().statements((deps) => claimDueCommands(deps, 1000, 10_000));
  assert.ok(claimed.some((c) => c.cid === cid));
  const held = await fresh();
  assert.ok(value(held, 'commands{state="running"}') >= 1, `running: ${value(held, 'commands{state="running"}')}`);
  assert.ok(
    value(held, 'commands{state="accepted"}') < value(waiting, 'commands{state="accepted"}'),
    'a held command no longer counts as waiting',
  );
});

test.run();
