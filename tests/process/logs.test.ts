import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startService } from '../support/process.ts';

const test = suite('log lines reach the output in time');
const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function waitFor(check: () => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return check();
}

test('a request line is visible within three seconds, with no further traffic', async () => {
  const service = startService({ PGLITE_DIR: 'memory://' });
  try {
    const port = await service.listening;
    await fetch(`http://127.0.0.1:${port}/v3/log-probe-path`, { headers: { 'x-request-id': 'flush-probe' } });
    assert.ok(
      await waitFor(() => service.output().includes('"id":"flush-probe"'), 3000),
      'the request line was not written within 3 s',
    );
  } finally {
    await service.stop();
  }
});

test('a fatal error is logged before the process exits with code 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pbi-fatal-'));
  dirs.push(dir);
  const service = startService({ PGLITE_DIR: join(dir, 'pglite'), DATA_DIR: dir });
  await service.listening;
  // Losing the data folder's lock is fatal (another process could open the folder now): remove it under the service.
  rmSync(join(dir, 'pglite.lock'), { recursive: true, force: true });
  assert.is(await service.exited, 1);
  const fatal = service
    .output()
    .split('\n')
    .find((line) => line.includes('"level":60'));
  assert.ok(fatal, `no fatal line in:\n${service.output().slice(-2000)}`);
  assert.match(fatal, /uncaught exception/);
});

test.run();
