// How a cluster start ends when it cannot go on, with exit code 1 and a line saying why: a role that dies too often, a
// process that does not drain, a start that cannot work, a port in use. Each start on a database of this suite's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { processClient, startService } from '../support/process.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';
import { ADMIN, adminUrl, sql, urlOf } from './cluster-support.ts';

const test = suite('the whole machine: a cluster start that cannot go on');
const database = `pbi_cluster_failures_${process.pid}_${Date.now()}`;
const databaseUrl = () => urlOf(database);
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-cluster-failures-'));

test.before(async () => {
  if (!onPostgres) return;
  await sql(adminUrl(), `create database ${database}`);
});

test.after(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  if (onPostgres) await sql(adminUrl(), `drop database if exists ${database} with (force)`);
});

test('a role that dies 5 times within a minute is given up: everything stops, exit code 1, one line says why', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const crashing = startService({
    DATABASE_URL: databaseUrl(),
    WEB_CONCURRENCY: '2',
    DATA_DIR: dataDir,
    JWT_SECRET: 'cluster-test-secret-0123456789-0123456789',
  });
  try {
    const workers = () =>
      crashing
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"worker started"'))
        .map((l) => Number(/"pid":(\d+)/.exec(l)![1]));
    // Once the start is whole: a process that dies before (a start that cannot work) stops it at once.
    for (const deadline = Date.now() + 60_000; !/"role":"all".*"msg":"ready: /.test(crashing.output()); ) {
      assert.ok(
        Date.now() < deadline && crashing.child.exitCode === null,
        `the cluster did not start:\n${crashing.output().slice(-3000)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (let death = 1; death <= 5; death++) {
      const deadline = Date.now() + 60_000;
      while (workers().length < death) {
        assert.ok(
          Date.now() < deadline && crashing.child.exitCode === null,
          `worker ${death} did not start:\n${crashing.output().slice(-3000)}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      process.kill(workers()[death - 1]!, 'SIGKILL');
    }
    assert.is(await crashing.exited, 1);
    assert.match(
      crashing.output(),
      /"msg":"the worker process died 5 times within a minute; stopping \(the lines above say why\)"/,
    );
    assert.is(
      crashing
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"worker started"')).length,
      5,
      'no sixth worker',
    );
  } finally {
    await crashing.stop('SIGKILL');
  }
});

test('a process that does not drain within 15 s (a send that hangs) makes the primary exit 1, saying which', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  let requests = 0;
  const hanging = createServer(() => {
    requests++;
  }); // never answers
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const stuck = startService({
    DATABASE_URL: databaseUrl(),
    WEB_CONCURRENCY: '2',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    WEBHOOK_TIMEOUT_MS: '60000',
    JWT_SECRET: 'cluster-test-secret-0123456789-0123456789',
  });
  try {
    for (const deadline = Date.now() + 60_000; !/"role":"all".*"msg":"ready: /.test(stuck.output()); ) {
      assert.ok(
        Date.now() < deadline && stuck.child.exitCode === null,
        `the cluster did not start:\n${stuck.output().slice(-3000)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const client = processClient(Number(/"port":(\d+),"role":"all"/.exec(stuck.output())![1]), ADMIN);
    const { id: brandId } = await client.admin<{ id: string }>('accounts.create', {
      name: 'Hanging receiver',
      role: 'brand',
    });
    await client.admin('webhookConfigs.upsert', {
      accountId: brandId,
      scope: 'brand',
      url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks`,
      transformer: 'default',
      version: '1.3.0',
    });
    await client.admin('jobs.create', { brandAccountId: brandId });
    for (const deadline = Date.now() + 30_000; requests === 0; ) {
      assert.ok(Date.now() < deadline, 'the delivery was not sent');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    stuck.child.kill('SIGTERM');
    assert.is(await stuck.exited, 1, stuck.output().slice(-3000));
    assert.match(stuck.output(), /"msg":"requests did not finish within 15 s; exiting"/);
    assert.match(stuck.output(), /"role":"worker".*"msg":"a process did not drain"/);
  } finally {
    await stuck.stop('SIGKILL');
    hanging.closeAllConnections();
    hanging.close();
  }
});

test("a start that cannot work (no server at DATABASE_URL) stops at once: exit 1, the processes' line once", async () => {
  // No server is needed: every process of the start meets the same refused connection.
  const doomed = startService({
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere',
    WEB_CONCURRENCY: '2',
    DATA_DIR: dataDir,
  });
  assert.is(await doomed.exited, 1);
  const output = doomed.output();
  assert.is(
    output.split('\n').filter((l) => l.includes('DATABASE_URL: no PostgreSQL server answers at 127.0.0.1:1')).length,
    1,
    `the line once:\n${output}`,
  );
  assert.match(output, /"msg":"shutting down: a process could not start"/);
  assert.not.match(output, /did not drain/, 'a process that never started had nothing to drain');
  assert.not.match(output, /died; starting another/);
  assert.match(output, /"exitCode":1,"msg":"stopped"/);
});

test('a port in use stops a cluster start at once, with the one line, before any process is forked', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, resolve));
  try {
    const busy = startService({
      DATABASE_URL: databaseUrl(),
      WEB_CONCURRENCY: '2',
      PORT: String((taken.address() as AddressInfo).port),
      DATA_DIR: dataDir,
    });
    const started = Date.now();
    assert.is(await busy.exited, 1);
    assert.ok(Date.now() - started < 10_000);
    assert.match(busy.output(), /PORT \d+ is in use by another process: stop it, or set PORT to a free port\./);
    assert.not.match(busy.output(), /database ready/);
  } finally {
    taken.close();
  }
});

test.run();
