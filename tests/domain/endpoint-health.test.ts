import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { endpointNoticeMail, judgeEndpoint } from '../../domain/endpoint-health.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';

// Endpoint health (CONTRACT §11) on the pure domain: the rule the fake runs and the SQL mirrors
// (tests/contracts/endpoint-health.ts holds both to it), and what a change of the configuration does to it.
const test = suite('endpoint health on the pure domain');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const mailedAt = new Date('2026-03-01T00:00:00.000Z');
const after = (ms: number) => new Date(mailedAt.getTime() + ms);

test('contacts are mailed about a new failing period only a full day after the last mail: not 12 h or a second short of it', () => {
  // A failing period that began a second before `ms` (the one the mail was about ended with a 2xx), and a delivery
  // ending failed in it: only the day since the last mail can hold the warning back.
  const warnedAt = (ms: number) =>
    judgeEndpoint(
      { failingSince: after(ms - 1000), enabled: true, failureMailedAt: mailedAt },
      [{ at: after(ms), ok: false }],
      1,
      after(ms),
      5 * DAY,
    );
  assert.equal(
    warnedAt(12 * HOUR),
    { failingSince: after(12 * HOUR - 1000), disable: false, warn: false },
    '12 h after the mail',
  );
  assert.is(warnedAt(DAY - 1000).warn, false, 'a second short of a day after the mail');
  assert.is(warnedAt(DAY).warn, true, 'a day after the mail');
  assert.is(warnedAt(DAY + 4000).warn, true, 'more than a day after the mail');
  // Never mailed: the first delivery ending failed warns at once.
  const neverMailed = { failingSince: after(-1000), enabled: true, failureMailedAt: null };
  assert.is(judgeEndpoint(neverMailed, [{ at: mailedAt, ok: false }], 1, mailedAt, 5 * DAY).warn, true);
});

test('enabling again an endpoint that was disabled starts its health afresh, with the same URL too; a save that keeps it enabled does not', () => {
  const failingSince = new Date('2026-02-20T08:00:00.000Z');
  const url = 'https://hooks.example.com/endpoint';
  const config = (enabled: boolean) =>
    new WebhookConfig({
      id: 'endpoint-1',
      accountId: 'account-1',
      scope: 'brand',
      url,
      transformer: 'default',
      version: '1.3.0',
      signatureKey: null,
      enabled,
      failingSince,
      disabledReason: enabled ? null : 'failing',
      failureMailedAt: failingSince,
      createdAt: failingSince,
      updatedAt: failingSince,
    });
  const disabled = config(false);
  disabled.configure(url, true);
  assert.equal(
    [disabled.enabled, disabled.disabledReason, disabled.failingSince],
    [true, null, null],
    'enabled again: failing from its next try',
  );

  const enabled = config(true);
  enabled.configure(url, true);
  assert.equal(
    [enabled.enabled, enabled.failingSince],
    [true, failingSince],
    'enabled all along: still failing since then',
  );
  enabled.configure(url, false);
  assert.equal(
    [enabled.enabled, enabled.disabledReason, enabled.failingSince],
    [false, 'integrator', failingSince],
    'disabled by the integrator',
  );
  enabled.configure('https://hooks.example.com/another', false);
  assert.is(enabled.failingSince, null, 'a new URL');
});

test('a URL stored with a line break before the rule existed cannot start a line of its own in the mail', () => {
  const url = 'http://hooks.example/fail\r\nBcc: attacker@example.com';
  for (const kind of ['failing', 'disabled'] as const) {
    const mail = endpointNoticeMail(
      'ops@example.com',
      { kind, endpointId: 'e', accountId: 'a', url, failingSince: mailedAt, failedDeliveries: 1 },
      'http://portal.test/portal/#/deliveries?status=failed',
    );
    assert.not.match(mail.subject, /[\r\n]/);
    assert.ok(mail.subject.endsWith('http://hooks.example/fail%0D%0ABcc:%20attacker@example.com'), mail.subject);
    assert.not.ok(
      mail.text.split('\n').some((line) => line.startsWith('Bcc:')),
      "no line of the sender's choosing",
    );
  }
});

test.run();
