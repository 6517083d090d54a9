import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ApiProblem,
  allOrders,
  commandOutcome,
  legacyOrders,
  logIn,
  order,
  requestRefreshToken,
  type Session,
  sendBrandCommand,
  sendPartnerCommand,
} from '../../../examples/api-client.ts';
import { uniqueEmail } from '../../support/app.ts';
import { integrator, tokenMailedTo } from '../../support/integrators.ts';
import { app, baseUrl, createJob, withGuideApp } from './support.ts';

// examples/api-client.ts, as docs/integrators.md shows it, run against the real service: logging in, the listings,
// commands and their outcomes, and how it retries.
const test = suite("the integrator guide's code runs as shown: the API client");
withGuideApp(test);

const problem = async (promise: Promise<unknown>): Promise<ApiProblem> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiProblem) return error;
    throw error;
  }
  throw new Error('no ApiProblem');
};

test('the client logs in with a mailed refresh token, and a wrong token is an ApiProblem 401', async () => {
  const accountId = (await app.admin.call<{ id: string }>('accounts.create', { name: 'Guide brand', role: 'brand' }))
    .id;
  const email = uniqueEmail('guide');
  await app.admin.call('contacts.create', { accountId, email });
  await requestRefreshToken(baseUrl, email);
  await app.drainDeferred();
  const session = await logIn(baseUrl, tokenMailedTo(app.mailbox, email), 120);
  const apiId = await createJob(accountId);
  assert.equal([(await order(session, apiId)).orderId, (await order(session, apiId)).status], [apiId, 'new']);
  const refused = await problem(logIn(baseUrl, session.accessToken)); // an access token buys no access token
  assert.equal([refused.status, refused.code], [401, 'UNAUTHORIZED']);
  assert.equal(
    [(await problem(order(session, 'no-such-order'))).status, (await problem(order(session, 'no-such-order'))).code],
    [404, 'NOT_FOUND'],
  );
});

test('the client walks both partner listings page by page, and filters by updatedSince', async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
  });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(
      (
        await app.admin.call<{ apiId: string }>('jobs.create', {
          brandAccountId: brand.accountId,
          partnerId: partner.accountId,
          updatedAt: `2026-01-0${i + 1}T00:00:00.000Z`,
        })
      ).apiId,
    );
  }
  const session: Session = { baseUrl, accessToken: partner.accessToken };
  const walked = [];
  for await (const o of allOrders(session, { pageSize: 2 })) walked.push(o.jobApiId);
  assert.equal(walked, [...ids].reverse(), 'every order once, newest first, over three pages');
  const since = [];
  for await (const o of allOrders(session, { updatedSince: '2026-01-04T00:00:00.000Z' })) since.push(o.jobApiId);
  assert.equal(since, [ids[4], ids[3]], 'updatedSince is inclusive');
  assert.equal(
    (await legacyOrders(session, { limit: 2, offset: 1 })).map((o) => o.jobApiId),
    [ids[3], ids[2]],
  );
  assert.equal((await legacyOrders(session)).length, 5);
  const brandSession: Session = { baseUrl, accessToken: brand.accessToken };
  assert.equal((await problem(legacyOrders(brandSession))).status, 401, "the listings are the partners'");
});

test('the client sends commands of both kinds and reads their outcomes; a used _cid with another body is 409, a bad body 400 with issues', async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  const key = 'guide-partner-signing-key';
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey: key,
  });
  const apiId = (
    await app.admin.call<{ apiId: string }>('jobs.create', {
      brandAccountId: brand.accountId,
      partnerId: partner.accountId,
      status: 'accepted',
    })
  ).apiId;
  const brandSession: Session = { baseUrl, accessToken: brand.accessToken };
  const partnerSession: Session = { baseUrl, accessToken: partner.accessToken };

  const cid = randomUUID();
  const command = { _v: '1.0.0', _cid: cid, _type: 'UpdateOrderExternalId', orderId: apiId, externalId: 'guide-ref' };
  assert.equal(await sendBrandCommand(brandSession, command), {
    _cid: cid,
    _type: 'UpdateOrderExternalId',
    status: 'accepted',
  });
  assert.equal(
    await sendBrandCommand(brandSession, { ...command }),
    { _cid: cid, _type: 'UpdateOrderExternalId', status: 'accepted' },
    'a resend is answered alike',
  );
  const outcome = await commandOutcome(brandSession, cid, 10_000);
  assert.equal(
    [outcome._type, outcome._type === 'CommandResultEvent' && outcome.result],
    ['CommandResultEvent', { orderId: apiId }],
  );
  assert.equal((await problem(sendBrandCommand(brandSession, { ...command, externalId: 'other' }))).code, 'CONFLICT');
  const missing = randomUUID();
  await sendBrandCommand(brandSession, { _v: '1.0.0', _cid: missing, _type: 'RefreshOrder', orderId: 'no-such-order' });
  const failed = await commandOutcome(brandSession, missing, 10_000);
  assert.equal(
    [failed._type, failed._type === 'CommandErrorEvent' && failed.code],
    ['CommandErrorEvent', 'ORDER_NOT_FOUND'],
  );
  const bad = await problem(
    sendBrandCommand(brandSession, { _v: '1.0.0', _cid: randomUUID(), _type: 'UpdateOrderExternalId', orderId: apiId }),
  );
  assert.equal([bad.status, bad.code, bad.issues.map((i) => i.path)], [400, 'BAD_REQUEST', ['externalId']]);

  const appointment = {
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'SetJobAppointment',
    jobApiId: apiId,
    appointmentStart: '2026-12-01T09:00:00Z',
    appointmentEnd: '2026-12-01T11:00:00Z',
  };
  assert.equal(
    (await problem(sendPartnerCommand(partnerSession, 'appointment', appointment, 'a-wrong-key'))).status,
    401,
  );
  const done = await sendPartnerCommand(partnerSession, 'appointment', appointment, key);
  assert.equal(
    [done.status, done.order.status, done.order.appointmentStart],
    ['succeeded', 'appointment_confirmed', '2026-12-01T09:00:00.000Z'],
  );
  const result = await commandOutcome(partnerSession, appointment._cid, 1000);
  assert.equal([result._type, result._cid], ['CommandResultEvent', appointment._cid]);
});

/** A server answering each request with the next of `answers` (the last one again when they run out). */
async function scripted(answers: { status: number; headers?: Record<string, string>; body?: string }[]) {
  const seen: { method: string; path: string; at: number }[] = [];
  const server = http.createServer((req, res) => {
    const answer = answers[Math.min(seen.length, answers.length - 1)]!;
    seen.push({ method: req.method!, path: req.url!, at: Date.now() });
    req
      .resume()
      .on('end', () =>
        res
          .writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
          .end(answer.body ?? '{}'),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

test('the client waits Retry-After after a 429, retries a safe request after a 5xx, and never repeats an unsafe one', async () => {
  const limited = await scripted([
    { status: 429, headers: { 'retry-after': '1' }, body: '{"code":"TOO_MANY_REQUESTS"}' },
    { status: 200, body: '{"access_token":"t"}' },
  ]);
  try {
    const started = Date.now();
    assert.equal(await logIn(limited.url, 'refresh'), { baseUrl: limited.url, accessToken: 't' });
    assert.is(limited.seen.length, 2);
    assert.ok(limited.seen[1]!.at - started >= 950, 'waited the second Retry-After asked for');
  } finally {
    await limited.close();
  }

  const failing = await scripted([{ status: 502 }, { status: 500 }, { status: 200, body: '[]' }]);
  try {
    assert.equal(
      await legacyOrders(
        { baseUrl: `${failing.url}/behind/a/gateway`, accessToken: 't' },
        { limit: 5, offset: undefined },
      ),
      [],
    );
    assert.is(failing.seen.length, 3, 'a GET is tried again after 5xx');
    assert.equal(
      failing.seen.map((r) => r.path),
      Array(3).fill('/behind/a/gateway/v3/partner-orders?limit=5'),
      "the base URL's path is kept; an undefined member is left out",
    );
  } finally {
    await failing.close();
  }

  const broken = await scripted([
    {
      status: 500,
      body: '{"code":"INTERNAL_SERVER_ERROR","detail":"An unexpected error occurred.","requestId":"r-1"}',
    },
  ]);
  try {
    const refused = await problem(requestRefreshToken(broken.url, 'someone@example.com'));
    assert.equal(
      [refused.status, refused.code, refused.requestId, broken.seen.length],
      [500, 'INTERNAL_SERVER_ERROR', 'r-1', 1],
      'a login is not repeated after a 5xx',
    );
  } finally {
    await broken.close();
  }
});

test.run();
