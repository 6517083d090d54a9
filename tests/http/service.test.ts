import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testApp } from '../support/app.ts';

const test = suite('health, readiness and the API reference');

test('/healthz and /readyz answer 200 while the database answers', async () => {
  const { http } = await testApp();
  assert.equal((await http.get('/healthz')).body, { status: 'ok' });
  const ready = await http.get('/readyz');
  assert.is(ready.status, 200);
  assert.equal(ready.body, { status: 'ready' });
});

test('/readyz is 503 once shutdown has begun', async () => {
  const app = await testApp();
  app.beginShutdown();
  assert.is((await app.http.get('/readyz')).status, 503);
});

test('/openapi.json is an OpenAPI 3 document; /docs renders it', async () => {
  const { http } = await testApp();
  const doc = await http.get('/openapi.json');
  assert.is(doc.status, 200);
  assert.match(doc.body.openapi, /^3\./);
  assert.type(doc.body.paths, 'object');
  assert.ok(!JSON.stringify(doc.body).includes('admin.'), 'internal procedures stay off the REST document');
  const docs = await http.get('/docs/');
  assert.is(docs.status, 200);
  assert.match(docs.text, /swagger-ui/i);
  assert.is((await http.get('/docs/swagger-ui-init.js')).status, 200);
});

test.run();
