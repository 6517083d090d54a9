import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { document } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { componentChecker } from '../support/openapi-validation.ts';
import { startReceiver } from '../support/receiver.ts';

// CONTRACT §11, example events: POST /v3/webhook-config/test with { eventType } on the real app, every type in every
// transformer × version. What arrives validates against the document's schema for that payload, and is the golden
// snapshot (tests/golden/example-events.json, tests/domain/example-events.test.ts) but for its fresh _eid and its
// times.
const test = suite('example events: every type, transformer and version, as the document describes them');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
const TYPES = [
  'WebhookTestEvent',
  'OrderStatusEvent',
  'InvoiceEvent',
  'CommandResultEvent',
  'CommandErrorEvent',
] as const;
const KEY = 'example-events-key-0123456789';
const golden = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'golden', 'example-events.json'), 'utf8'),
) as Record<string, Record<string, unknown>>;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** The payload with its event id and its times (which follow the clock) replaced by placeholders. */
const normalized = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, v) =>
    key === '_eid' ? '<eid>' : typeof v === 'string' && ISO_TIME.test(v) ? '<time>' : v,
  );
/** The document's schema of each type's payload in each transformer. */
const componentOf = (type: string, transformer: string) =>
  type === 'WebhookTestEvent'
    ? 'WebhookTestEvent'
    : type === 'OrderStatusEvent'
      ? transformer === 'default'
        ? 'DefaultOrderStatusEvent'
        : 'PartnerOrderStatusEvent'
      : 'DeliveredEvent';

test.before(async () => {
  app = await appWithMailbox();
});

test('each example arrives signed, marked webhook-test: 1, with a fresh _eid, valid against the document and equal to its golden snapshot; nothing is stored', async () => {
  const receiver = await startReceiver();
  const check = componentChecker(document());
  const eids = new Set<string>();
  for (const [role, transformer] of [
    ['brand', 'default'],
    ['partner', 'partner-format'],
    ['brand', 'partner-format'],
    ['partner', 'default'],
  ] as const) {
    for (const version of ['1.0.0', '1.1.0', '1.3.0']) {
      // An account per combination: at most 10 endpoint tests a minute per account.
      const who = await integrator(app, role);
      const url = receiver.url(`/${who.accountId}`);
      const put = await app.http
        .put('/v3/webhook-config')
        .set('authorization', `Bearer ${who.accessToken}`)
        .send({ url, transformer, version, signatureKey: KEY });
      assert.is(put.status, 200, JSON.stringify(put.body));
      const eventsBefore = await app.services.unitOfWork().statements((d) => d.events.recentFor(who.accountId, 10));
      for (const eventType of TYPES) {
        const res = await app.http
          .post('/v3/webhook-config/test')
          .set('authorization', `Bearer ${who.accessToken}`)
          .send({ eventType });
        assert.equal([res.status, res.body.delivered], [200, true], JSON.stringify(res.body));
        const got = receiver.received.at(-1)!; // the test answers once the endpoint has
        const where = `${eventType} ${transformer} ${version}`;
        assert.equal(
          [got.payload._type, got.payload._v, got.headers['webhook-test']],
          [eventType, version, '1'],
          where,
        );
        assert.equal(verifyWebhook(got.body, got.headers, KEY), got.payload, `${where}: signed`);
        assert.not.ok(eids.has(String(got.payload._eid)), `${where}: a fresh _eid`);
        eids.add(String(got.payload._eid));
        assert.is(got.headers['webhook-id'], got.payload._eid);
        assert.equal(
          check(componentOf(eventType, transformer), got.payload),
          [],
          `${where}: valid against ${componentOf(eventType, transformer)}`,
        );
        assert.equal(normalized(got.payload), normalized(golden[where]), `${where}: its golden snapshot`);
      }
      assert.equal(
        await app.services.unitOfWork().statements((d) => d.events.recentFor(who.accountId, 10)),
        eventsBefore,
        'nothing stored',
      );
    }
  }
  assert.is(eids.size, 60);
});

test('without eventType a WebhookTestEvent; an unknown type, or one of another case, is 400 naming eventType, and nothing is sent', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  await app.http
    .put('/v3/webhook-config')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ url: receiver.url(), transformer: 'default', version: '1.3.0' });
  const plain = await app.http
    .post('/v3/webhook-config/test')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({});
  assert.is(plain.status, 200);
  assert.equal(
    [receiver.received.length, receiver.received[0]!.payload._type, receiver.received[0]!.headers['webhook-test']],
    [1, 'WebhookTestEvent', '1'],
  );
  for (const eventType of ['OrderCreatedEvent', 'orderstatusevent', '', 42, null]) {
    const res = await app.http
      .post('/v3/webhook-config/test')
      .set('authorization', `Bearer ${brand.accessToken}`)
      .send({ eventType });
    assert.equal([res.status, res.body.code], [400, 'BAD_REQUEST'], JSON.stringify(eventType));
    assert.equal(
      res.body.issues.map((i: { path: string }) => i.path),
      ['eventType'],
    );
  }
  assert.is(receiver.received.length, 1, 'nothing sent for a refused type');
});

test.run();
