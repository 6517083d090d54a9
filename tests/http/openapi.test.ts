import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { COMMAND_TYPES } from '../../domain/command.ts';
import { routeTable } from '../../server/routers/contracts.ts';
import { document, testApp } from '../support/app.ts';
import { answerChecker } from '../support/openapi-validation.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, any>;
const test = suite('the API reference is the contract');

const operations = () =>
  Object.entries(document().paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })),
  );

test('/openapi.json is the document the tests check answers against, and a valid OpenAPI 3.1 document', async () => {
  const { http } = await testApp();
  const served = await http.get('/openapi.json');
  assert.equal(served.body, JSON.parse(JSON.stringify(document())));
  const validator = new Validator();
  const result = await validator.validate(served.body);
  assert.ok(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  assert.is(validator.version, '3.1');
});

test('every request body has an example the procedure accepts, every answer with a body an example of its schema', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document(), 'openapi');
  for (const { path, method, operation } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    const media = operation.requestBody?.content?.['application/json'];
    if (media) {
      const examples =
        media.example !== undefined
          ? [media.example]
          : Object.values(media.examples ?? {}).map((e) => (e as Json).value);
      assert.ok(examples.length > 0, `${where}: no request example`);
      const { input } = Object.values(routeTable).find(
        ({ meta: { openapi } }) => openapi?.path === path && openapi.method.toLowerCase() === method,
      )!;
      const bodyPointer = ['paths', path, method, 'requestBody', 'content', 'application/json', 'schema']
        .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      const documentedBody = ajv.getSchema(`openapi#/${bodyPointer}`)!;
      assert.is(
        operation.requestBody.required ?? false,
        !input.safeParse({}).success,
        `${where}: the body is required exactly when {} is refused`,
      );
      for (const example of examples) {
        const parsed = input.safeParse(example);
        assert.ok(parsed.success, `${where}: the request example is refused: ${JSON.stringify(parsed.error)}`);
        assert.ok(
          documentedBody(example),
          `${where}: the request example does not match the documented body: ${JSON.stringify(documentedBody.errors)}`,
        );
      }
    }
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      if (!status.startsWith('2') || !response.content) continue;
      const { example } = response.content['application/json'];
      assert.ok(example !== undefined, `${where} ${status}: no example answer`);
      const pointer = ['paths', path, method, 'responses', status, 'content', 'application/json', 'schema']
        .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      const validate = ajv.getSchema(`openapi#/${pointer}`)!;
      assert.ok(validate(example), `${where} ${status}: ${JSON.stringify(validate.errors)}`);
    }
  }
});

test('the documented bodies refuse what the service refuses: other members, two identifiers, an unknown command', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document(), 'openapi');
  const body = (path: string) =>
    ajv.getSchema(`openapi#/paths/${path.replace(/\//g, '~1')}/post/requestBody/content/application~1json/schema`)!;
  const appointment = {
    _v: '1.0.0',
    _cid: 'c',
    _type: 'SetJobAppointment',
    jobApiId: 'j',
    appointmentStart: '2026-12-01T09:00:00Z',
  };
  assert.ok(body('/v3/commands/partner/appointment')(appointment));
  assert.not.ok(body('/v3/commands/partner/appointment')({ ...appointment, extra: 1 }));
  assert.not.ok(body('/v3/commands/partner/appointment')({ ...appointment, gidOrderNumber: 'O-1' }));
  assert.not.ok(body('/v3/commands/partner/appointment')({ ...appointment, jobApiId: undefined }));
  assert.ok(body('/v3/commands')({ _v: '1.0.0', _cid: 'c', _type: 'RefreshOrder', orderId: 'o' }));
  assert.not.ok(body('/v3/commands')({ _v: '1.0.0', _cid: 'c', _type: 'Nope', orderId: 'o' }));
  assert.not.ok(body('/v3/commands')({ _v: '1.0.0', _cid: 'c', _type: 'RefreshOrder', orderId: 'o', extra: 1 }));
});

test('every problem is documented as application/problem+json with the one Problem schema; security is per operation', () => {
  for (const { path, method, operation } of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      if (status.startsWith('2')) continue;
      assert.equal(Object.keys(response.content), ['application/problem+json'], `${method} ${path} ${status}`);
      assert.equal(response.content['application/problem+json'].schema, { $ref: '#/components/schemas/Problem' });
    }
    assert.ok(Array.isArray(operation.security), `${method} ${path}: security`);
  }
  const unauthorized = (document().paths as Json)['/v3/webhook-config'].get.responses['401'];
  assert.equal(Object.keys(unauthorized.headers), ['WWW-Authenticate']);
  const signed = document().paths!['/v3/commands/partner/appointment']!.post!.parameters as Json[];
  assert.equal(
    signed.map((p) => [p.in, p.name, p.required ?? false]),
    [['header', 'x-webhook-signature', false]],
  );
});

test('the answer checker refuses an undocumented status, a member outside the schema, and the wrong content type', () => {
  const check = answerChecker(document());
  const answer = (status: number, body: unknown, type = 'application/json') =>
    ({ status, body, text: JSON.stringify(body), headers: { 'content-type': type } }) as never;
  const config = {
    scope: 'brand',
    url: null,
    transformer: 'default',
    version: '1.3.0',
    enabled: true,
    hasSignatureKey: false,
    previousKeyExpiresAt: null,
    failingSince: null,
    disabledReason: null,
    asymmetricSigning: false,
    publicKey: null,
    previousPublicKey: null,
  };
  check('get', '/v3/webhook-config', answer(200, config));
  assert.throws(() => check('get', '/v3/webhook-config', answer(418, {})), /status not documented/);
  assert.throws(
    () => check('get', '/v3/webhook-config', answer(200, { ...config, signatureKey: 'leaked' })),
    /does not match/,
  );
  assert.throws(
    () => check('get', '/v3/webhook-config', answer(404, { code: 'NOT_FOUND' }, 'application/json')),
    /documented application\/problem\+json/,
  );
  assert.throws(() => check('post', '/v3/nowhere', answer(200, {})), /no documented operation/);
});

/** Every schema of the document with the JSON pointer to it. */
function* schemas(value: unknown, at = ''): Generator<[string, Json]> {
  if (typeof value !== 'object' || value === null) return;
  yield [at, value as Json];
  for (const [key, inner] of Object.entries(value)) yield* schemas(inner, `${at}/${key}`);
}

test('every parameter says what it does (a description given after .optional() is lost: it must come before)', () => {
  const bare = operations().flatMap(({ path, method, operation }) =>
    (operation.parameters ?? [])
      .filter((p: Json) => !p.description && !p.schema?.description)
      .map((p: Json) => `${method.toUpperCase()} ${path} ${p.name}`),
  );
  assert.equal(bare, []);
});

test("integers carry their true bounds: none below 0 and none of zod's ±9007199254740991", () => {
  const integers = [...schemas(document())].filter(
    ([, s]) => s.type === 'integer' || (Array.isArray(s.type) && s.type.includes('integer')),
  );
  assert.ok(integers.length > 20, `${integers.length} integers`);
  for (const [at, schema] of integers) {
    assert.ok(typeof schema.minimum === 'number' && schema.minimum >= 0, `${at}: minimum ${schema.minimum}`);
    assert.is.not(schema.maximum, Number.MAX_SAFE_INTEGER, `${at}: maximum`);
  }
  const answer = (path: string, method: string, status: string) =>
    (document().paths as Json)[path][method].responses[status].content['application/json'].schema.properties;
  const bounds = (schema: Json) => [schema.minimum, schema.maximum];
  assert.equal(bounds(answer('/v3/auth/access-token', 'post', '200').expires_in), [60, 86_400]);
  const page = answer('/v3/partner-orders/paginated', 'get', '200');
  assert.equal(
    [bounds(page.page), bounds(page.pageSize), bounds(page.total)],
    [
      [1, undefined],
      [1, 200],
      [0, undefined],
    ],
  );
  const attempt = answer('/v3/webhook-deliveries', 'get', '200').items.items.properties.attempts.items.properties;
  assert.equal(
    [bounds(attempt.statusCode.anyOf[0]), bounds(attempt.durationMs)],
    [
      [0, 999],
      [0, undefined],
    ],
  );
});

test('the paginated listing is typed by the partner shape alone; the legacy listing and the poll, which serve either, by both', async () => {
  const responseSchema = (path: string) =>
    (document().paths as Json)[path].get.responses['200'].content['application/json'].schema;
  assert.equal(responseSchema('/v3/partner-orders/paginated').properties.items.items, {
    $ref: '#/components/schemas/PartnerOrderStatusEvent',
  });
  assert.equal(responseSchema('/v3/partner-orders').items, { $ref: '#/components/schemas/OrderStatusEvent' });
  assert.equal(responseSchema('/v3/poll/job/{version}/{orderId}'), { $ref: '#/components/schemas/OrderStatusEvent' });
  // Both shapes share _type "OrderStatusEvent" (CONTRACT §6): no discriminator can name them; each one's own required
  // member does.
  const either = (document().components as Json).schemas.OrderStatusEvent;
  assert.equal(either.oneOf, [
    { $ref: '#/components/schemas/PartnerOrderStatusEvent' },
    { $ref: '#/components/schemas/DefaultOrderStatusEvent' },
  ]);
  assert.is(either.discriminator, undefined);

  // Real answers: a partner's page and a brand's poll, each checked by the agent against its operation's schema.
  const { appWithMailbox, integrator } = await import('../support/integrators.ts');
  const app = await appWithMailbox();
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
  });
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    partnerId: partner.accountId,
  });
  const listed = await app.http
    .get('/v3/partner-orders/paginated')
    .set('authorization', `Bearer ${partner.accessToken}`);
  assert.is(listed.status, 200);
  const polled = await app.http.get(`/v3/poll/job/*/${apiId}`).set('authorization', `Bearer ${brand.accessToken}`);
  assert.is(polled.status, 200);
  assert.is(polled.body.orderId, apiId);
  // The brand's shape is not what the paginated listing documents.
  const check = answerChecker(document());
  const page = (item: unknown) =>
    ({
      status: 200,
      body: { items: [item], page: 1, pageSize: 50, total: 1 },
      text: '',
      headers: { 'content-type': 'application/json' },
    }) as never;
  check('get', '/v3/partner-orders/paginated', page(listed.body.items[0]));
  assert.throws(() => check('get', '/v3/partner-orders/paginated', page(polled.body)), /does not match/);
});

test("types a client generator can use: each command's result by its commandType, booleans in the query as booleans", () => {
  const outcome = (document().components as Json).schemas.CommandOutcomeEvent;
  const [results, error] = outcome.oneOf as Json[];
  const byType = new Map<string, string[]>();
  for (const variant of results!.oneOf as Json[]) {
    for (const type of variant.properties.commandType.enum)
      byType.set(type, Object.keys(variant.properties.result.properties));
  }
  assert.equal([...byType.keys()].sort(), [...COMMAND_TYPES].sort(), 'every command, in one variant each');
  assert.is(
    byType.size,
    (results!.oneOf as Json[]).reduce((n: number, v: Json) => n + v.properties.commandType.enum.length, 0),
    'no command in two',
  );
  assert.equal(
    [
      byType.get('CreateOrderFromMapping'),
      byType.get('RefreshInvoice'),
      byType.get('UpdateCustomer'),
      byType.get('SetJobAppointment'),
    ],
    [['orderIds'], ['invoiceId'], ['orderId'], ['orderId']],
  );
  assert.equal([...error!.properties.commandType.enum].sort(), [...COMMAND_TYPES].sort());
  const ajv = new Ajv2020({ strict: false });
  const valid = ajv.compile({ ...outcome, $defs: {} });
  const head = { _eid: 'e', _type: 'CommandResultEvent', _v: '1.3.0', _cid: 'c', _metadata: {} };
  assert.ok(valid({ ...head, commandType: 'CreateOrderFromMapping', result: { orderIds: ['a'] } }));
  assert.not.ok(
    valid({ ...head, commandType: 'CreateOrderFromMapping', result: { orderId: 'a' } }),
    'a result of another command refused',
  );
  assert.not.ok(valid({ ...head, commandType: 'NoSuchCommand', result: { orderId: 'a' } }));

  const queryBooleans = operations()
    .flatMap(({ operation }) => (operation.parameters ?? []) as Json[])
    .filter((p) => p.in === 'query' && /\btrue\b/.test(p.description ?? ''));
  assert.ok(queryBooleans.length > 0);
  for (const p of queryBooleans) assert.is(p.schema.type, 'boolean', `${p.name} is typed boolean`);
});

test.run();
