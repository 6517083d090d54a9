import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { refreshWhileSettling } from '../../portal/src/pages/settling.ts';

// The portal's delivery pages ask again every second only while a delivery is about to change: not for ever after a
// pending delivery of a disabled endpoint, which waits as it is (CONTRACT §11) for as long as that lasts.
const test = suite("the portal's refresh of settling deliveries");

const now = Date.parse('2026-12-01T12:00:00.000Z');
const pending = (inMs: number | null) => ({
  status: 'pending',
  nextAttemptAt: inMs === null ? null : new Date(now + inMs).toISOString(),
});

test('every second while a pending delivery is due within a minute either way; otherwise not', () => {
  assert.is(refreshWhileSettling([pending(30_000)], now), 1000, 'due in half a minute');
  assert.is(refreshWhileSettling([pending(-30_000)], now), 1000, 'just due: about to be sent');
  assert.is(refreshWhileSettling([pending(null)], now), 1000);
  assert.is(refreshWhileSettling([pending(3_600_000)], now), false, 'due in an hour');
  assert.is(refreshWhileSettling([pending(-3_600_000)], now), false, 'an hour overdue: waiting for something else');
  assert.is(refreshWhileSettling([{ status: 'failed', nextAttemptAt: null }], now), false);
  assert.is(refreshWhileSettling([pending(-3_600_000), pending(10_000)], now), 1000, 'any one settling');
});

test.run();
