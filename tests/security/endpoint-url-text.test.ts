import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';

// CONTRACT §7: whitespace or a control character anywhere in an endpoint's URL is 400 naming `url`, for integrators and
// admins alike, and nothing is stored. A CR/LF stored as given reached the failing-endpoint mail, where it started
// lines of the sender's choosing (a Bcc: header).
const test = suite('endpoint URLs: whitespace and control characters refused, for integrators and admins');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
test.before(async () => {
  app = await appWithMailbox();
});

const REFUSED = [
  'http://hooks.example/fail\r\nBcc: attacker@example.com',
  'http://hooks.example/a\nb',
  ' http://hooks.example/x',
  'http://hooks.example/x ',
  'http://hooks.example/\tx',
  'http://hooks.example/x\u0000',
  'http://hooks.example/x\u007f',
  'http://hooks.example/x\u0085',
  'http://hooks.example/\u00a0x',
  'http://hooks.example/x\u2028',
  'http://hooks.example/x\u200b',
  'http://hooks.example/x\ufeff',
];
const KEPT = 'http://hooks.example/kept';

/** A new brand's token, and a PUT of its configuration with `url`. */
async function brandPutting() {
  const brand = await integrator(app, 'brand');
  const auth = `Bearer ${brand.accessToken}`;
  const put = (url: string) =>
    app.http
      .put('/v3/webhook-config')
      .set('authorization', auth)
      .send({ url, transformer: 'default', version: '1.3.0' });
  return { auth, put };
}

test('PUT /v3/webhook-config: 400 problem naming url, and the configuration stays as it was', async () => {
  const { auth, put } = await brandPutting();
  assert.is((await put(KEPT)).status, 200);
  for (const url of REFUSED) {
    const res = await put(url);
    assert.is(res.status, 400, JSON.stringify(url));
    assert.match(String(res.headers['content-type']), /application\/problem\+json/);
    assert.equal(
      res.body.issues.map((i: { path: string }) => i.path),
      ['url'],
      JSON.stringify(url),
    );
    // U+0000 is refused by every string of the wire first (server/wire-text.ts), the rest by the URL's own rule.
    assert.match(res.body.issues[0].message, /whitespace or control characters|U\+0000/, JSON.stringify(url));
  }
  const stored = await app.http.get('/v3/webhook-config').set('authorization', auth);
  assert.is(stored.body.url, KEPT);
  assert.is(
    (await put('http://hooks.example/path?q=%0D%0A')).status,
    200,
    'percent-encoded, they are plain text of the URL',
  );
});

test('admin.webhookConfigs.upsert: 400 naming url, nothing stored', async () => {
  const { id } = await app.admin.call<{ id: string }>('accounts.create', { name: 'Admin URL brand', role: 'brand' });
  for (const url of REFUSED) {
    const res = await app.admin.mutate('webhookConfigs.upsert', {
      accountId: id,
      scope: 'brand',
      url,
      transformer: 'default',
      version: '1.3.0',
    });
    assert.is(res.status, 400, JSON.stringify(url));
    assert.is(res.body.error.data.issues[0].path, 'url');
  }
  const created = await app.admin.mutate('webhookConfigs.upsert', {
    accountId: id,
    scope: 'brand',
    transformer: 'default',
    version: '1.3.0',
  });
  assert.is(created.status, 200);
  assert.is(created.body.result.data.url, null, 'no refused URL was kept by an earlier call');
});

test('an empty URL is not "no URL": 400 naming url, from PUT and from admins, and nothing stored', async () => {
  const { auth, put } = await brandPutting();
  assert.is((await put(KEPT)).status, 200);
  const empty = await put('');
  assert.is(empty.status, 400);
  assert.equal(
    empty.body.issues.map((i: { path: string }) => i.path),
    ['url'],
  );
  assert.is((await app.http.get('/v3/webhook-config').set('authorization', auth)).body.url, KEPT);
  const { id } = await app.admin.call<{ id: string }>('accounts.create', { name: 'Admin empty URL', role: 'brand' });
  const admin = await app.admin.mutate('webhookConfigs.upsert', {
    accountId: id,
    scope: 'brand',
    url: '',
    transformer: 'default',
    version: '1.3.0',
  });
  assert.is(admin.status, 400);
  assert.is(admin.body.error.data.issues[0].path, 'url');
});

test.run();
