import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testApp } from '../support/app.ts';

// Browsers ask for /favicon.ico on every page of the portal and /docs: an icon, not a 404.
const test = suite('GET /favicon.ico');

test("answers a small SVG icon, cached a week, with the portal's security headers and a policy that allows nothing", async () => {
  const { http } = await testApp();
  const res = await http.get('/favicon.ico').responseType('blob');
  const svg = (res.body as Buffer).toString('utf8');
  assert.is(res.status, 200);
  assert.is(res.headers['content-type'], 'image/svg+xml; charset=utf-8');
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/s);
  assert.ok(svg.length < 1024, 'small');
  assert.not.match(svg, /<script|on\w+=|href=/i, 'nothing active or linked in the icon');
  assert.is(res.headers['cache-control'], 'public, max-age=604800');
  assert.is(res.headers['x-content-type-options'], 'nosniff');
  assert.is(res.headers['referrer-policy'], 'no-referrer');
  assert.is(res.headers['x-frame-options'], 'DENY');
  assert.is(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
  assert.is((await http.head('/favicon.ico')).status, 200, 'HEAD too');
});

test.run();
