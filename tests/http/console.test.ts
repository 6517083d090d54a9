import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// What the console says while the service works: each delivery attempt, each command's outcome; never a payload or a
// key.
const test = suite('the console');
type Line = Record<string, unknown> & { level: number; msg: string };
const lines: Line[] = [];
const logger = pino(
  { level: 'info' },
  {
    write: (line: string) => {
      lines.push(JSON.parse(line) as Line);
    },
  },
);
let app: Awaited<ReturnType<typeof appWithMailbox>>;

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '100ms,100ms' }, { logger });
  app.worker.start();
});
test.after(() => app.worker.stop());

async function lineWhere(match: (line: Line) => boolean, timeoutMs = 10_000): Promise<Line> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = lines.find(match);
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(
        `no such line in:\n${lines
          .map((l) => JSON.stringify(l))
          .join('\n')
          .slice(-3000)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('each delivery attempt: warn with the status and the next attempt, then warn when it fails for good, info when delivered; no payload or key', async () => {
  const marker = `payload-marker-${randomUUID()}`;
  const key = `signature-key-marker-${randomUUID()}`;
  const failing = await startReceiver(() => 500);
  const brand = (await app.admin.call<{ id: string }>('accounts.create', { name: 'console brand', role: 'brand' })).id;
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand,
    scope: 'brand',
    url: failing.url('/hooks?token=url-secret'),
    transformer: 'default',
    version: '1.3.0',
    signatureKey: key,
  });
  await app.admin.call('jobs.create', { brandAccountId: brand, apiId: marker });
  const deliveries = (await app.admin.query<{ items: { id: string }[] }>('deliveries.list', { accountId: brand }))
    .items;
  const id = deliveries[0]!.id;
  const first = await lineWhere((l) => l.delivery === id && l.attempt === 1);
  assert.is(first.level, 40);
  assert.is(first.status, 500);
  assert.is(first.host, new URL(failing.url('/')).host);
  assert.ok(
    typeof first.nextAttemptAt === 'string' && !Number.isNaN(Date.parse(first.nextAttemptAt)),
    JSON.stringify(first),
  );
  assert.match(first.msg, `failed (HTTP 500, attempt 1); next attempt at ${first.nextAttemptAt}`);
  const last = await lineWhere((l) => l.delivery === id && l.attempt === 3);
  assert.is(last.level, 40);
  assert.is(last.failed, true);
  assert.match(last.msg, 'failed for good (HTTP 500, attempt 3)');
  // The delivery failed while its endpoint fails: its contacts are mailed, and the operators told (the host only).
  const notice = await lineWhere((l) => l.account === brand && l.failedDeliveries === 1);
  assert.equal([notice.level, notice.host], [40, new URL(failing.url('/')).host]);
  assert.match(
    notice.msg,
    `webhook endpoint at ${notice.host} failing since ${notice.failingSince} (1 failed deliveries); mailing its contacts`,
  );

  const working = await startReceiver(() => 204);
  const other = (await app.admin.call<{ id: string }>('accounts.create', { name: 'console brand 2', role: 'brand' }))
    .id;
  await app.admin.call('webhookConfigs.upsert', {
    accountId: other,
    scope: 'brand',
    url: working.url('/hooks'),
    transformer: 'default',
    version: '1.3.0',
  });
  await app.admin.call('jobs.create', { brandAccountId: other });
  const [delivered] = (await app.admin.query<{ items: { id: string }[] }>('deliveries.list', { accountId: other }))
    .items;
  const ok = await lineWhere((l) => l.delivery === delivered!.id);
  assert.is(ok.level, 30);
  assert.is(ok.status, 204);
  assert.match(ok.msg, /^webhook delivered to 127\.0\.0\.1:\d+ \(HTTP 204, attempt 1\)$/);

  const all = lines.map((l) => JSON.stringify(l)).join('\n');
  for (const secret of [marker, key, 'url-secret', 'failure 500'])
    assert.not.match(all, secret, `${secret} was logged`);
});

test('each command outcome, brand and partner: info with _cid, the account and the outcome or error code; never the body', async () => {
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
    status: 'accepted',
  });
  const marker = `body-marker-${randomUUID()}`;
  const cid = `cid-${randomUUID()}`;
  assert.is(
    (
      await app.http
        .post('/v3/commands')
        .set('authorization', `Bearer ${brand.accessToken}`)
        .send({ _v: '1.0.0', _cid: cid, _type: 'ApplyCancellation', orderId: apiId, cancellationReason: marker })
    ).status,
    202,
  );
  const failed = await lineWhere((l) => l._cid === cid);
  assert.equal(
    [failed.level, failed.account, failed.outcome, failed.code, failed.msg],
    [30, brand.accountId, 'failed', 'UNKNOWN_CANCELLATION_REASON', 'brand command failed: UNKNOWN_CANCELLATION_REASON'],
  );
  const refreshed = `cid-${randomUUID()}`;
  await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: refreshed, _type: 'RefreshOrder', orderId: apiId });
  const succeeded = await lineWhere((l) => l._cid === refreshed);
  assert.equal(
    [succeeded.level, succeeded.outcome, succeeded.code, succeeded.msg],
    [30, 'succeeded', undefined, 'brand command succeeded'],
  );

  const appointment = {
    _v: '1.0.0',
    _type: 'SetJobAppointment',
    jobApiId: apiId,
    appointmentStart: '2026-12-01T09:00:00Z',
    appointmentEnd: '2026-12-01T11:00:00Z',
  };
  const done = `cid-${randomUUID()}`;
  assert.is(
    (
      await app.http
        .post('/v3/commands/partner/appointment')
        .set('authorization', `Bearer ${partner.accessToken}`)
        .send({ ...appointment, _cid: done })
    ).status,
    200,
  );
  const ok = await lineWhere((l) => l._cid === done);
  assert.equal(
    [ok.level, ok.account, ok.type, ok.outcome, ok.msg],
    [30, partner.accountId, 'SetJobAppointment', 'succeeded', 'partner command succeeded'],
  );
  const missing = `cid-${randomUUID()}`;
  const res = await app.http
    .post('/trpc/partnerCommands.setJobAppointment')
    .set('authorization', `Bearer ${partner.accessToken}`)
    .send({ ...appointment, _cid: missing, jobApiId: marker });
  assert.is(res.status, 404);
  const notFound = await lineWhere((l) => l._cid === missing);
  assert.equal(
    [notFound.outcome, notFound.code, notFound.msg],
    ['failed', 'NOT_FOUND', 'partner command failed: NOT_FOUND'],
  );
  assert.not.match(lines.map((l) => JSON.stringify(l)).join('\n'), marker);

  // A refused body's _cid and _type are the sender's text, of any length: the line leaves them out.
  const longCid = `cid-${marker}-${'x'.repeat(300)}`;
  const refused = await app.http
    .post('/v3/commands/partner/appointment')
    .set('authorization', `Bearer ${partner.accessToken}`)
    .send({ ...appointment, _cid: longCid, _type: `Type-${marker}` });
  assert.is(refused.status, 400);
  const invalid = await lineWhere(
    (l) => l.account === partner.accountId && l.outcome === 'failed' && l.code !== 'NOT_FOUND',
  );
  assert.equal([invalid._cid, invalid.type], [undefined, 'partnerCommands.setJobAppointment']);
  assert.not.match(lines.map((l) => JSON.stringify(l)).join('\n'), marker);
});

test.run();
