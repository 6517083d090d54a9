import { createHmac } from 'node:crypto';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_BODY_BYTES } from '../../../server/pipeline/json-body.ts';
import { listening } from '../../support/app.ts';
import {
  ADMIN,
  app,
  assertProblem,
  assertTrpcError,
  brand,
  KEY,
  nested,
  partner,
  rawPost,
  signed,
  unchanged,
  withOddInputApp,
} from './support.ts';

// A body no operation can read (too deep, not an object, another media type, over 1 MiB) is a 4xx on both faces,
// before anything walks it.
const test = suite('odd input, the body as a whole: always a 4xx, and nothing changes');
withOddInputApp(test);

test('JSON nested deeper than 64 levels is 400 before anything walks it, on both faces, with or without a token', async () => {
  await unchanged(async () => {
    const deep = await rawPost('/v3/auth/login', `{"email":${nested(5000)}}`);
    assertProblem(deep, 400, 'BAD_REQUEST', /deeper than 64 levels/);
    // 64 levels in all (the object and 63 arrays) are read, and judged by the schema.
    const deepest = await rawPost('/v3/auth/login', `{"email":${nested(63)}}`);
    assertProblem(deepest, 400, 'BAD_REQUEST', /not valid/);
    assertProblem(
      await rawPost('/v3/auth/login', `{"email":${nested(64)}}`),
      400,
      'BAD_REQUEST',
      /deeper than 64 levels/,
    );
    // The checks before the body come first: no token is 401, a bad signature 401, only then the depth.
    const command = `{"_v":"1.0.0","_cid":"deep-1","_type":"SetJobAppointment","jobApiId":${nested(5000)}}`;
    assert.is((await rawPost('/v3/commands/partner/appointment', command)).status, 401);
    assert.is(
      (await rawPost('/v3/commands/partner/appointment', command, signed.accessToken).set('x-webhook-signature', 'bad'))
        .status,
      401,
    );
    const sig = createHmac('sha256', KEY).update(command).digest('hex');
    assertProblem(
      await rawPost('/v3/commands/partner/appointment', command, signed.accessToken).set('x-webhook-signature', sig),
      400,
      'BAD_REQUEST',
      /deeper/,
    );
    assertProblem(
      await rawPost(
        '/v3/commands',
        `{"_v":"1.0.0","_cid":"deep-2","_type":"RefreshOrder","orderId":${nested(5000)}}`,
        brand.accessToken,
      ),
      400,
      'BAD_REQUEST',
      /deeper/,
    );
    const rpc = await app.http
      .post('/trpc/admin.accounts.create')
      .set('authorization', ADMIN)
      .set('content-type', 'application/json')
      .send(`{"name":${nested(5000)},"role":"brand"}`);
    assertTrpcError(rpc, 400, 'BAD_REQUEST');
    const query = await app.http
      .get(`/trpc/admin.deliveries.list?input=${encodeURIComponent(`{"accountId":${nested(100)}}`)}`)
      .set('authorization', ADMIN);
    assertTrpcError(query, 400, 'BAD_REQUEST');
  });
});

test('well-formed JSON that is not an object is 400 BAD_REQUEST, not PARSE_ERROR; malformed JSON stays PARSE_ERROR', async () => {
  await unchanged(async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      assertProblem(await rawPost('/v3/auth/login', body), 400, 'BAD_REQUEST', /must be a JSON object/);
      assertProblem(
        await rawPost('/v3/auth/access-token', body, partner.refreshToken),
        400,
        'BAD_REQUEST',
        /must be a JSON object/,
      );
      assertProblem(
        await rawPost('/v3/commands', body, brand.accessToken),
        400,
        'BAD_REQUEST',
        /must be a JSON object/,
      );
      const put = await app.http
        .put('/v3/webhook-config')
        .set('authorization', `Bearer ${partner.accessToken}`)
        .set('content-type', 'application/json')
        .send(body);
      assertProblem(put, 400, 'BAD_REQUEST', /must be a JSON object/);
      assertTrpcError(
        await app.http
          .post('/trpc/admin.accounts.create')
          .set('authorization', ADMIN)
          .set('content-type', 'application/json')
          .send(body),
        400,
        'BAD_REQUEST',
      );
    }
    assertProblem(await rawPost('/v3/auth/login', '{"email":'), 400, 'PARSE_ERROR', /not well-formed JSON/);
  });
});

test('a media type that is not exactly application/json is 415; parameters aside, it is', async () => {
  const jsonx = await app.http
    .post('/v3/auth/login')
    .set('content-type', 'application/jsonx')
    .send('{"email":"a@example.com"}');
  assertProblem(jsonx, 415, 'UNSUPPORTED_MEDIA_TYPE', /application\/jsonx/);
  const charset = await app.http
    .post('/v3/auth/login')
    .set('content-type', 'application/json; charset=utf-8')
    .send('{"email":"a@example.com"}');
  assert.is(charset.status, 200);
  // Media types are case-insensitive (RFC 9110): the adapter compared them as written, and answered a 415 of its own.
  const cased = await app.http
    .post('/v3/auth/login')
    .set('content-type', 'Application/JSON; Charset=UTF-8')
    .send('{"email":"a@example.com"}');
  assert.is(cased.status, 200, JSON.stringify(cased.body));
});

test("/trpc answers a body of another media type in tRPC's shape, not a problem", async () => {
  const res = await app.http
    .post('/trpc/admin.accounts.create')
    .set('authorization', ADMIN)
    .set('content-type', 'application/jsonx')
    .send('{"name":"x","role":"brand"}');
  assertTrpcError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
});

/**
 * Sends only the head of a request that declares `length` body bytes; answers what came back and whether the server
 * closed.
 */
async function declared(base: string, path: string, length: number) {
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`,
  );
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const closed = await Promise.race([
    new Promise<boolean>((resolve) => socket.once('close', () => resolve(true))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
  ]);
  socket.destroy();
  return { text, closed };
}

test('a declared content-length over 1 MiB is answered 413 before any of the body is sent, and the connection closed', async () => {
  const base = await listening(app);
  const rest = await declared(base, '/v3/auth/login', 2 * 1024 * 1024);
  assert.match(rest.text, /^HTTP\/1\.1 413/);
  assert.match(rest.text, /"code":"PAYLOAD_TOO_LARGE"/);
  assert.ok(rest.closed, 'the server closed the connection instead of waiting for a body nobody reads');
  const rpc = await declared(base, '/trpc/admin.accounts.create', 5 * 1024 * 1024);
  assert.match(rpc.text, /^HTTP\/1\.1 413/);
  assert.match(rpc.text, /"httpStatus":413/);
  assert.ok(rpc.closed);
});

test('the early 413 is for a declared length over 1 MiB: exactly 1 MiB is read and judged by the operation, one byte more is not', async () => {
  const base = await listening(app);
  const prefix = '{"email":"';
  const exact = `${prefix}${'a'.repeat(MAX_BODY_BYTES - prefix.length - 2)}"}`;
  assert.is(Buffer.byteLength(exact), 1024 * 1024);
  // Read whole, it is valid JSON whose email is not an email: the operation's 400, not the edge's 413.
  assertProblem(await rawPost('/v3/auth/login', exact), 400, 'BAD_REQUEST', /not valid/);
  const over = await declared(base, '/v3/auth/login', MAX_BODY_BYTES + 1);
  assert.match(over.text, /^HTTP\/1\.1 413/);
  assert.ok(over.closed, 'refused before the body, and the connection closed');
});

test.run();
