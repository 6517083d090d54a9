import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testApp } from '../support/app.ts';

// Pages people use may not be framed by another site (clickjacking): the portal, and the API reference at /docs.
const test = suite('no framing by other sites: /docs and the portal');

test("GET /docs/ and /portal/ answer frame-ancestors 'none' (and X-Frame-Options for older browsers at /docs)", async () => {
  const { http } = await testApp();
  const docs = await http.get('/docs/');
  assert.is(docs.status, 200);
  assert.match(String(docs.headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.is(docs.headers['x-frame-options'], 'DENY');
  const asset = await http.get('/docs/swagger-ui.css');
  assert.match(String(asset.headers['content-security-policy']), /frame-ancestors 'none'/, 'every answer under /docs');
  const portal = await http.get('/portal/');
  assert.match(String(portal.headers['content-security-policy']), /frame-ancestors 'none'/);
});

test.run();
