import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { partnerLoggedIn, processClient, startService } from '../support/process.ts';

const test = suite('the embedded database across idle time and lost connections');
const ADMIN = 'process-admin-token-0123456789';
const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The embedded server drops every connection idle for 1 s: each pause below outlasts it, so each call after a pause
// runs on a new connection to the same backend, whose session still holds the old one's prepared statements. (Not
// shorter: the start's migrations run on the same connection, and a machine busy with other work can pause them
// for a few hundred ms, which would drop it mid-migration.)
test('authenticated calls keep working after connections are dropped while idle, /readyz included', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pbi-idle-'));
  dirs.push(dataDir);
  const service = startService({
    PGLITE_DIR: join(dataDir, 'pglite'),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    TEST_EMBEDDED_DROP_IDLE_MS: '1000',
  });
  try {
    const client = processClient(await service.listening, ADMIN);
    const token = await partnerLoggedIn(client, dataDir, 'idle-partner@example.com');
    const page = () => client.rest('/v3/partner-orders/paginated', { token });
    assert.is((await page()).status, 200);
    for (let round = 0; round < 3; round++) {
      await sleep(1500);
      if (round === 1) assert.is((await client.rest('/readyz')).status, 200, '/readyz after a dropped connection');
      const res = await page();
      assert.is(res.status, 200, `round ${round}: ${await res.clone().text()}`);
      assert.is((await client.rest('/v3/partner-orders', { token })).status, 200);
      assert.is((await client.rest('/v3/webhook-config', { token })).status, 200);
    }
    assert.not.match(service.output(), /42P05|already exists/);
  } finally {
    await service.stop();
  }
});

test.run();
