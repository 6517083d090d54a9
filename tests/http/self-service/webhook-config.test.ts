import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../../support/integrators.ts';
import { startReceiver } from '../../support/receiver.ts';
import { closeAtEnd } from '../../support/shared.ts';
import { app, configure, createJob, type Json, post, setStatus, withSelfServiceApp } from './support.ts';

// The caller's webhook configuration: testing its endpoint (POST /v3/webhook-config/test), and a partner's signature
// key replaced over PUT /v3/webhook-config.
const test = suite('integrator self-service: endpoint test and signature key');
withSelfServiceApp(test);

/** A receiver that takes every request and never answers it. */
async function silentReceiver() {
  const server: Server = createServer(() => {
    /* never answers */
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAtEnd(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

test('endpoint test: what the endpoint did, signed like a delivery, nothing stored; 10 a minute', async () => {
  const receiver = await startReceiver(({ n }) => (n === 2 ? 500 : 200));
  const brand = await integrator(app, 'brand');
  const whsec = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
  assert.is((await post('/v3/webhook-config/test', brand.accessToken)).status, 404, 'no configuration');
  await configure(brand.accountId, 'brand', null);
  assert.is((await post('/v3/webhook-config/test', brand.accessToken)).status, 404, 'no URL');
  await configure(brand.accountId, 'brand', receiver.url('/test'), { signatureKey: whsec, enabled: false });

  const outcomes: Json[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await post('/v3/webhook-config/test', brand.accessToken);
    assert.is(res.status, 200, JSON.stringify(res.body));
    outcomes.push(res.body);
  }
  assert.equal(
    outcomes.map((o) => [o.statusCode, o.delivered]),
    [
      [200, true],
      [500, false],
      [200, true],
      [200, true],
    ],
    'each test tried once, as answered',
  );
  const sent = receiver.received.filter((r) => r.payload._type === 'WebhookTestEvent');
  assert.is(sent.length, 4, 'a disabled endpoint is tested too');
  sent.forEach((r, i) => {
    assert.equal(Object.keys(r.payload).sort(), ['_eid', '_type', '_v', 'sentAt']);
    assert.is(r.payload._v, '1.3.0');
    assert.is(r.headers['x-webhook-signature'], createHmac('sha256', whsec).update(r.body).digest('hex'));
    assert.equal(new Webhook(whsec).verify(r.body, r.headers as Record<string, string>), r.payload);
    const outcome = outcomes[i]!;
    assert.is(outcome.statusCode, r.answered);
    assert.is(outcome.delivered, r.answered === 200);
    if (outcome.delivered) assert.is(outcome.error, null);
    else assert.match(outcome.error, /500/);
  });
  assert.is(
    (await app.services.unitOfWork().statements((d) => d.events.recentFor(brand.accountId, 10))).length,
    0,
    'nothing stored',
  );

  await configure(brand.accountId, 'brand', await silentReceiver());
  const timedOut = await post('/v3/webhook-config/test', brand.accessToken);
  assert.equal(
    { ...timedOut.body, durationMs: 0, error: typeof timedOut.body.error },
    { delivered: false, statusCode: null, durationMs: 0, error: 'string' },
  );
  assert.ok(timedOut.body.durationMs >= 500, `waited for the timeout (${timedOut.body.durationMs} ms)`);

  const strict = await appWithMailbox({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' });
  const refused = await strict.http
    .post('/v3/webhook-config/test')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({});
  assert.is(refused.status, 200);
  assert.is(refused.body.delivered, false);
  assert.match(refused.body.error, /private|loopback|refused/i, refused.body.error);

  const busy = await integrator(app, 'brand');
  await configure(busy.accountId, 'brand', receiver.url('/busy'));
  for (let i = 1; i <= 10; i++)
    assert.is((await post('/v3/webhook-config/test', busy.accessToken)).status, 200, `test ${i}`);
  const limited = await post('/v3/webhook-config/test', busy.accessToken);
  assert.is(limited.status, 429);
  assert.ok(Number(limited.headers['retry-after']) >= 1);
});

test("endpoint test: 10 a minute per endpoint too, so two children sharing their master's endpoint have 10 between them", async () => {
  const receiver = await startReceiver();
  const master = await integrator(app, 'partner');
  await configure(master.accountId, 'partner', receiver.url('/shared'));
  const children = [
    await integrator(app, 'partner', master.accountId),
    await integrator(app, 'partner', master.accountId),
  ];
  // Five each: neither child reaches its own 10, the endpoint they share does.
  for (let i = 1; i <= 5; i++) {
    for (const [c, child] of children.entries()) {
      assert.is((await post('/v3/webhook-config/test', child.accessToken)).status, 200, `child ${c}, test ${i}`);
    }
  }
  const limited = await post('/v3/webhook-config/test', children[0]!.accessToken);
  assert.is(limited.status, 429, "the shared endpoint's 11th test in the minute");
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  assert.is(receiver.received.length, 10, 'the refused test was not sent');
});

test("a partner's signature key, replaced over PUT /v3/webhook-config, holds from its next command on", async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  const [oldKey, newKey] = ['old-signing-key-0123456789', 'new-signing-key-0123456789'];
  await configure(partner.accountId, 'partner', null, { signatureKey: oldKey });
  const job = await createJob(brand.accountId, partner.accountId);
  await setStatus(job, 'accepted');
  const command = (key: string) => {
    const raw = JSON.stringify({
      _v: '1.0.0',
      _cid: randomUUID(),
      _type: 'SetJobYourOrderId',
      jobApiId: job,
      yourOrderID: `Y-${randomUUID()}`,
    });
    return app.http
      .post('/v3/commands/partner/your-order-id')
      .set('authorization', `Bearer ${partner.accessToken}`)
      .set('content-type', 'application/json')
      .set('x-webhook-signature', createHmac('sha256', key).update(raw).digest('hex'))
      .send(raw);
  };
  assert.is((await command(oldKey)).status, 200);
  const put = await app.http.put('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`).send({
    url: 'https://hooks.example.com/partner',
    enabled: false,
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey: newKey,
  });
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.is((await command(oldKey)).status, 401, 'the old key no longer signs');
  assert.is((await command(newKey)).status, 200, 'the new key does');
});

test.run();
