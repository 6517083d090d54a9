import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../support/temp-postgres.ts';

// examples/receive-webhooks.ts as a reader runs it: an endpoint test's example (`webhook-test: 1`) is printed as one,
// and is not an event seen.
const test = suite('examples/receive-webhooks.ts');
const root = join(import.meta.dirname, '..', '..');

test('prints a real event as verified, once, and an example marked as one, every time', async () => {
  const key = `whsec_${randomBytes(24).toString('base64')}`;
  const port = await freePort();
  const receiver = spawn(process.execPath, ['--import', 'tsx', 'examples/receive-webhooks.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', WEBHOOK_KEY: key, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  receiver.stdout.on('data', (d: Buffer) => {
    printed += d;
  });
  receiver.stderr.on('data', (d: Buffer) => {
    printed += d;
  });
  const post = async (id: string, event: Record<string, unknown>, test: boolean) => {
    const body = JSON.stringify(event);
    const signature = new Webhook(key).sign(id, new Date(), body);
    const res = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': signature,
        ...(test && { 'webhook-test': '1' }),
      },
    });
    return res.status;
  };
  try {
    for (let waited = 0; !printed.includes('receiving webhooks'); waited += 50) {
      assert.ok(waited < 20_000, `the receiver did not start:\n${printed}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const example = { _eid: 'evt-example', _type: 'OrderStatusEvent', orderId: 'example-order' };
    const real = { _eid: 'evt-real', _type: 'OrderStatusEvent', orderId: 'my-order' };
    // The example first, and under the id the real event comes with next: had it been seen, the real one would be
    // skipped.
    assert.is(await post('evt-1', example, true), 204);
    assert.is(await post('evt-1', real, false), 204);
    assert.is(await post('evt-1', real, false), 204, 'a retry');
    assert.is(await post('evt-2', example, true), 204);
    // Printed before it answers, but the pipe may lag behind the answers: wait for the last one's line.
    for (let waited = 0; !printed.includes(' evt-2 '); waited += 50) {
      assert.ok(waited < 5000, `the receiver printed too little:\n${printed}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const lines = printed.split('\n').filter((l) => l.startsWith('verified'));
    assert.equal(
      lines,
      [
        `verified (example, not a real change) OrderStatusEvent evt-1 ${JSON.stringify(example)}`,
        `verified OrderStatusEvent evt-1 ${JSON.stringify(real)}`,
        `verified (example, not a real change) OrderStatusEvent evt-2 ${JSON.stringify(example)}`,
      ],
      printed,
    );
  } finally {
    receiver.kill('SIGKILL');
  }
});

test.run();
