import { request as httpRequest } from 'node:http';
import supertest from 'supertest';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bindPort } from '../../server/http/bind-port.ts';
import { listening, testApp } from '../support/app.ts';

// One voice per face: /trpc answers every failure in tRPC's shape with the request id; the worker's port answers
// unknown paths with the API's problem; GET / leads to the reference.
const test = suite('one voice per face');
let app: Awaited<ReturnType<typeof testApp>>;
test.before(async () => {
  app = await testApp();
});

interface TrpcFailure {
  status: number;
  headers: Record<string, unknown>;
  body: { error: { message: string; code: number; data: Record<string, unknown> } };
}

/** A /trpc failure in tRPC's own shape, as JSON, carrying the request id it was answered under. */
function assertTrpcShape(res: TrpcFailure, status: number, code: string, message: RegExp) {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const { error } = res.body;
  assert.equal(Object.keys(error).sort(), ['code', 'data', 'message']);
  assert.type(error.code, 'number');
  assert.equal([error.data.code, error.data.httpStatus], [code, status]);
  assert.match(error.message, message);
  assert.ok(typeof error.data.requestId === 'string' && error.data.requestId.length > 0, 'a request id');
  assert.is(error.data.requestId, res.headers['x-request-id']);
}

test("/trpc: 413 (declared, and sent in chunks), 415, 405 and an unknown procedure, each in tRPC's shape with the limit or the accepted type and the request id", async () => {
  const big = JSON.stringify({ email: 'x'.repeat(1024 * 1024) });
  assertTrpcShape(
    (await app.http
      .post('/trpc/auth.login')
      .set('content-type', 'application/json')
      .send(big)) as unknown as TrpcFailure,
    413,
    'PAYLOAD_TOO_LARGE',
    /larger than 1 MiB/,
  );
  assertTrpcShape(await chunked('/trpc/auth.login', big), 413, 'PAYLOAD_TOO_LARGE', /larger than 1 MiB/);
  assertTrpcShape(
    (await app.http.post('/trpc/auth.login').set('content-type', 'text/plain').send('{}')) as unknown as TrpcFailure,
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    /content-type: application\/json; this one is text\/plain/,
  );
  const deleted = (await app.http.delete('/trpc/auth.login')) as unknown as TrpcFailure;
  assertTrpcShape(
    deleted,
    405,
    'METHOD_NOT_SUPPORTED',
    /^DELETE is not supported on \/trpc: queries take GET, mutations POST\.$/,
  );
  assert.is(deleted.headers.allow, 'GET, POST');
  assertTrpcShape(
    (await app.http.post('/trpc/no.such.procedure').send({})) as unknown as TrpcFailure,
    404,
    'NOT_FOUND',
    /no\.such\.procedure/,
  );
  assertTrpcShape(
    (await app.http
      .post('/trpc/auth.login')
      .set('content-type', 'application/json')
      .send('{"email":')) as unknown as TrpcFailure,
    400,
    'PARSE_ERROR',
    /not well-formed JSON/,
  );
  // /trpc itself is the tRPC face too.
  const bare = (await app.http.put('/trpc')) as unknown as TrpcFailure;
  assertTrpcShape(bare, 405, 'METHOD_NOT_SUPPORTED', /^PUT is not supported on \/trpc/);
  assert.is(bare.body.error.data.path, '');
  assertTrpcShape(
    (await app.http.post('/trpc').set('content-type', 'text/plain').send('{}')) as unknown as TrpcFailure,
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    /content-type: application\/json/,
  );
  // A procedure's own failure carries the id too.
  assertTrpcShape(
    (await app.http.get('/trpc/webhookConfig.get?input=%7B%7D')) as unknown as TrpcFailure,
    401,
    'UNAUTHORIZED',
    /access token/,
  );
});

/** A POST sent in chunks, without content-length: its size is known only as it is read. */
async function chunked(path: string, body: string): Promise<TrpcFailure> {
  const base = new URL(await listening(app));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => {
            text += d;
          })
          .on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 65_536) req.write(body.slice(i, i + 65_536));
    req.end();
  });
}

test("while the process starts, /trpc answers 503 in tRPC's shape and REST in a problem, both with Retry-After and the request id", async () => {
  const bound = await bindPort(0);
  try {
    const base = `http://127.0.0.1:${bound.port}`;
    const rpc = await fetch(`${base}/trpc/auth.login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assertTrpcShape(
      { status: rpc.status, headers: Object.fromEntries(rpc.headers), body: (await rpc.json()) as TrpcFailure['body'] },
      503,
      'SERVICE_UNAVAILABLE',
      /^The service is starting; try again in a moment\.$/,
    );
    assert.is(rpc.headers.get('retry-after'), '2');
    const bare = await fetch(`${base}/trpc?batch=1`);
    assertTrpcShape(
      {
        status: bare.status,
        headers: Object.fromEntries(bare.headers),
        body: (await bare.json()) as TrpcFailure['body'],
      },
      503,
      'SERVICE_UNAVAILABLE',
      /starting/,
    );
    const rest = await fetch(`${base}/v3/webhook-config`);
    assert.equal(
      [rest.status, rest.headers.get('content-type'), rest.headers.get('retry-after')],
      [503, 'application/problem+json', '2'],
    );
    assert.is(((await rest.json()) as { code: string }).code, 'SERVICE_UNAVAILABLE');
  } finally {
    await new Promise((resolve) => bound.server.close(resolve));
  }
});

test('GET / redirects to /docs', async () => {
  const res = await app.http.get('/');
  assert.equal([res.status, res.headers.location], [302, '/docs']);
});

test("the worker's port answers an unknown path with the API's problem+json 404, not express's HTML", async () => {
  // The worker role needs DATABASE_URL to start; here the tests' database is handed in, so none is opened by it.
  const worker = await testApp({ SERVICE_ROLE: 'worker', DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused' });
  // Not through the checked agent: the API's document does not describe the worker's port.
  const http = supertest(worker.app);
  const res = await http.get('/v3/partner-orders').set('x-request-id', 'worker-404-probe');
  assert.is(res.status, 404);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  assert.equal(res.body, {
    type: 'about:blank',
    title: 'Not Found',
    status: 404,
    detail: 'There is no GET /v3/partner-orders.',
    code: 'NOT_FOUND',
    message: 'There is no GET /v3/partner-orders.',
    requestId: 'worker-404-probe',
  });
  assert.is((await http.get('/readyz')).status, 200);
  const metrics = await http.get('/metrics').set('x-request-id', 'worker-metrics-probe');
  assert.equal(
    [metrics.status, metrics.body.requestId, metrics.headers['www-authenticate']],
    [401, 'worker-metrics-probe', 'Bearer'],
  );
  assert.is((await http.get('/')).status, 404);
});

test.run();
