import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../../client/cli.ts';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import { ADMIN_TOKEN, listening } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { closeAtEnd } from '../support/shared.ts';

// What was sent and answered (CONTRACT §11): GET /v3/webhook-deliveries/{id}, admin.deliveries.get, `deliveries show`.
const test = suite("one delivery in full: its payload, each try's request and answer");
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
let app: App;

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '800' });
  app.worker.start();
});
test.after(() => app.worker.stop());

const LONG = 'x'.repeat(5000);
/**
 * An answer that would clear an operator's screen, write its clipboard (OSC 52) and colour it (C1 CSI), over two lines.
 */
const ESCAPES = 'one\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m\r\ntwo\tthree\x00\x7f';

/** Headers as the receivers below got them, by path. */
const arrived = new Map<string, Record<string, string | string[] | undefined>>();

/**
 * A receiver: `/long` answers 500 with 5000 bytes, `/escapes` 500 with ESCAPES, `/silent` never answers, anything else
 * 200 with a short body.
 */
async function receiver() {
  const server = createServer((req, res) => {
    arrived.set(req.url!, req.headers);
    req.resume();
    req.on('end', () => {
      if (req.url === '/silent') return; // no answer: the sender times out
      if (req.url === '/long') res.writeHead(500, { 'content-type': 'text/plain', 'x-receiver': 'long' }).end(LONG);
      else if (req.url === '/escapes') res.writeHead(500, { 'content-type': 'text/plain' }).end(ESCAPES);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAtEnd(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A brand whose endpoint is `url` signed with `key`, and its one delivery once it has a try. */
async function deliveredTo(url: string, signatureKey: string | null = null) {
  const brand = await integrator(app, 'brand');
  const res = await app.http
    .put('/v3/webhook-config')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ url, transformer: 'default', version: '1.3.0', ...(signatureKey && { signatureKey }) });
  assert.is(res.status, 200);
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  for (const deadline = Date.now() + 10_000; ; ) {
    const listed = await app.http.get('/v3/webhook-deliveries').set('authorization', `Bearer ${brand.accessToken}`);
    assert.is(listed.status, 200);
    const [delivery] = listed.body.items as Json[];
    if (delivery?.attempts.length === 1) return { brand, listed: delivery };
    if (Date.now() > deadline) throw new Error(`no try within 10 s: ${JSON.stringify(listed.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const detail = (id: string, token: string) =>
  app.http.get(`/v3/webhook-deliveries/${id}`).set('authorization', `Bearer ${token}`);

test("the stored request verifies against the stored payload with the endpoint's key (Standard Webhooks); the answer is kept", async () => {
  const key = `whsec_${randomBytes(24).toString('base64')}`;
  const base = await receiver();
  const { brand, listed } = await deliveredTo(`${base}/ok`, key);
  const res = await detail(listed.id, brand.accessToken);
  assert.is(res.status, 200, JSON.stringify(res.body));
  const {
    payload,
    attempts: [attempt],
    ...rest
  } = res.body as Json;
  const { attempts: _, ...asListed } = listed;
  assert.equal(rest, asListed, 'the delivery as listed');
  assert.equal(JSON.parse(payload)._eid, listed.eventId);

  const { url, headers } = attempt.request;
  assert.is(url, `${base}/ok`);
  const got = arrived.get('/ok')!;
  for (const [name, value] of Object.entries(headers as Record<string, string>))
    assert.is(got[name], value, `${name} as the receiver got it`);
  assert.equal([headers['content-type'], headers['webhook-id']], ['application/json', listed.eventId]);
  // Verified as a receiver's library does it, and by hand: HMAC-SHA256 over id.timestamp.payload with the key's bytes.
  assert.equal(new Webhook(key).verify(payload, headers), JSON.parse(payload));
  const expected = createHmac('sha256', Buffer.from(key.slice('whsec_'.length), 'base64'))
    .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${payload}`)
    .digest('base64');
  assert.ok(headers['webhook-signature'].split(' ').includes(`v1,${expected}`), headers['webhook-signature']);
  assert.is(headers['x-webhook-signature'], createHmac('sha256', key).update(payload).digest('hex'));

  assert.equal(
    [attempt.statusCode, attempt.response.body, attempt.response.headers['content-type']],
    [200, '{"ok":true}', 'application/json'],
  );
  // The admin's answer is the same delivery, with its account and scope.
  const admin = await app.admin.query<Json>('deliveries.get', { deliveryId: listed.id });
  assert.equal(admin, { ...res.body, accountId: brand.accountId, scope: 'brand' });
  // Listing stays lean: no payload, no request or answer.
  assert.equal(Object.keys(listed.attempts[0]).sort(), ['at', 'durationMs', 'error', 'statusCode']);
  assert.is(listed.payload, undefined);
});

test('an answer over 4096 bytes is cut at 4096; no answer (a timeout) is response null', async () => {
  const base = await receiver();
  const long = await deliveredTo(`${base}/long`);
  const [cut] = (await detail(long.listed.id, long.brand.accessToken)).body.attempts as Json[];
  assert.equal(
    [cut!.statusCode, Buffer.byteLength(cut!.response.body), cut!.response.body, cut!.response.headers['x-receiver']],
    [500, 4096, LONG.slice(0, 4096), 'long'],
  );

  const silent = await deliveredTo(`${base}/silent`);
  const [unanswered] = (await detail(silent.listed.id, silent.brand.accessToken)).body.attempts as Json[];
  assert.equal([unanswered!.statusCode, unanswered!.response, unanswered!.request.url], [null, null, `${base}/silent`]);
  assert.match(unanswered!.error, /timeout/);
});

test("a delivery's url is where its last attempt went, not the endpoint's URL changed since (CONTRACT §10)", async () => {
  const base = await receiver();
  const { brand, listed } = await deliveredTo(`${base}/long`);
  const auth = `Bearer ${brand.accessToken}`;
  assert.is(listed.url, `${base}/long`);
  const moved = await app.http
    .put('/v3/webhook-config')
    .set('authorization', auth)
    .send({ url: `${base}/moved`, transformer: 'default', version: '1.3.0' });
  assert.is(moved.status, 200);
  const [again] = (await app.http.get('/v3/webhook-deliveries').set('authorization', auth)).body.items as Json[];
  assert.equal([again!.id, again!.url], [listed.id, `${base}/long`], 'listed with the URL its attempt went to');
  assert.is((await detail(listed.id, brand.accessToken)).body.url, `${base}/long`);
  const [adminListed] = (await app.admin.query<{ items: Json[] }>('deliveries.list', { accountId: brand.accountId }))
    .items;
  assert.is(adminListed!.url, `${base}/long`);
});

test("another account's delivery, an unknown id and an id of another shape are 404, admin.deliveries.get of an unknown one too", async () => {
  const base = await receiver();
  const { listed } = await deliveredTo(`${base}/ok`);
  const other = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: other.accountId,
    scope: 'brand',
    url: `${base}/other`,
    transformer: 'default',
    version: '1.3.0',
  });
  for (const id of [listed.id, randomUUID(), 'not-an-id']) {
    const res = await detail(id, other.accessToken);
    assert.equal([res.status, res.body.code], [404, 'NOT_FOUND'], id);
  }
  const res = await app.admin.mutate('deliveries.get', { deliveryId: randomUUID() });
  assert.is.not(res.status, 200);
});

test('`npm run admin -- deliveries show <id>` prints the delivery as a reader follows it', async () => {
  const key = 'a-signature-key-0123456789';
  const base = await receiver();
  const { listed } = await deliveredTo(`${base}/long`, key);
  let out = '';
  const env = { ADMIN_URL: await listening(app), ADMIN_TOKEN };
  const code = await runCli(['deliveries', 'show', listed.id], env, {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      out += t;
    },
  });
  assert.is(code, 0, out);
  const lines = out.split('\n');
  assert.is(lines[0], `delivery ${listed.id}: pending (next try at ${listed.nextAttemptAt})`);
  assert.ok(lines.includes(`endpoint ${base}/long`), out);
  assert.ok(lines.includes(`    "_eid": "${listed.eventId}",`), `the payload, pretty: ${out}`);
  assert.ok(
    lines.some((l) => l.startsWith('try 1 at ') && l.includes(': 500 in ')),
    out,
  );
  assert.ok(lines.includes(`  > POST ${base}/long`) && lines.some((l) => /^ {2}> webhook-signature: v1,/.test(l)), out);
  assert.ok(
    lines.includes('  < 500') && lines.includes('  < x-receiver: long') && lines.includes(`  < ${LONG.slice(0, 4096)}`),
    'the answer',
  );
  let json = '';
  assert.is(
    await runCli(['--json', 'deliveries', 'show', listed.id], env, {
      stdout: (t) => {
        json += t;
      },
      stderr: () => {},
    }),
    0,
  );
  assert.is(
    JSON.parse(json).payload,
    (await app.admin.query<Json>('deliveries.get', { deliveryId: listed.id })).payload,
  );
});

test("`deliveries show` leaves out the control characters of a receiver's answer: no escape sequence reaches the terminal", async () => {
  const { listed } = await deliveredTo(`${await receiver()}/escapes`);
  let out = '';
  const code = await runCli(
    ['deliveries', 'show', listed.id],
    { ADMIN_URL: await listening(app), ADMIN_TOKEN },
    {
      stdout: (t) => {
        out += t;
      },
      stderr: (t) => {
        out += t;
      },
    },
  );
  assert.is(code, 0, out);
  assert.not.match(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, JSON.stringify(out));
  assert.ok(
    out.split('\n').includes('  < one[2J]52;c;ZXZpbA==31m') && out.includes('  < two\tthree'),
    JSON.stringify(out),
  );
  const stored = (await app.admin.query<Json>('deliveries.get', { deliveryId: listed.id })).attempts[0].response.body;
  assert.is(
    stored.slice(0, 30),
    ESCAPES.slice(0, 30),
    "what is kept is what came: only the terminal's text leaves them out",
  );
});

test("the retention purge takes a delivery's tries with it: their requests and answers are kept no longer than it", async () => {
  const { listed } = await deliveredTo(`${await receiver()}/long`);
  const sql = <T>(text: string, values: unknown[]) =>
    app.database.orm.em.fork().getConnection().execute<T[]>(text, values);
  const kept = () =>
    sql<{ n: number; exchanged: number }>(
      `select count(*)::int as n, count(request_url)::int as exchanged from delivery_attempts where delivery_id = ?`,
      [listed.id],
    );
  assert.equal(await kept(), [{ n: 1, exchanged: 1 }], 'the try, with what was sent and answered');
  // Finished (the purge leaves pending deliveries alone), as after its last try.
  await sql(`delete from delivery_queue where delivery_id = ?`, [listed.id]);
  await sql(`update deliveries set status = 'failed', failed_at = updated_at where id = ?`, [listed.id]);
  // Made older than the retention window: only this delivery moves, with its event and tries (one time, the event's,
  // dates them all); the purge runs as the worker's would.
  const older = "created_at = created_at - interval '400 days'";
  await sql(`update events set ${older} where id = ?`, [listed.eventId]);
  await sql(`update deliveries set ${older} where id = ?`, [listed.id]);
  await sql(`update delivery_attempts set ${older} where delivery_id = ?`, [listed.id]);
  while ((await app.services.unitOfWork().statements((d) => purgeRetainedEvents(d, 30, 1000))) === 1000);
  assert.match(
    await app.admin.query('deliveries.get', { deliveryId: listed.id }).then(() => 'found', String),
    /answered 404/,
    'the delivery is gone',
  );
  assert.equal(await kept(), [{ n: 0, exchanged: 0 }], 'and its tries with it');
});

test.run();
