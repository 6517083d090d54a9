import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN, testApp } from '../support/app.ts';

// tRPC batches calls by default (httpBatchLink): each call of a batch runs in a unit of work of its own. One shared
// unit let their transactions overwrite each other on one EntityManager (500s, rows committed anyway).
const test = suite('a /trpc batch');

test('three admin mutations in one batch each commit in their own transaction', async () => {
  const app = await testApp();
  const names = ['batch-a', 'batch-b', 'batch-c'].map((n) => `${n}-${Date.now()}`);
  const res = await app.http
    .post(`/trpc/${names.map(() => 'admin.accounts.create').join(',')}?batch=1`)
    .set('authorization', `Bearer ${ADMIN_TOKEN}`)
    .set('content-type', 'application/json')
    .send(JSON.stringify(Object.fromEntries(names.map((name, i) => [i, { name, role: 'brand' }]))));
  assert.is(res.status, 200, res.text);
  const ids = (res.body as { result: { data: { id: string } } }[]).map((r) => r.result.data.id);
  assert.is(new Set(ids).size, 3);
  const found = await app.services
    .unitOfWork()
    .statements(async (deps) => Promise.all(ids.map((id) => deps.accounts.get(id))));
  assert.equal(
    found.map((a) => a?.name),
    names,
  );
});

test.run();
