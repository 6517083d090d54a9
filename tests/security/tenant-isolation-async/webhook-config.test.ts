import { createHmac, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type Account,
  accountsOf,
  app,
  get,
  hierarchy,
  hooks,
  ids,
  type Json,
  type Kind,
  post,
  put,
  RUNS,
  replay,
  sql,
  withIsolationApp,
} from './support.ts';

// Webhook configuration self-service (CONTRACT §7, §10): GET, PUT and the endpoint test address the caller's own,
// nothing else.
const test = suite('tenant isolation of the webhook configuration');
withIsolationApp(test);

const VERSIONS = ['1.0.0', '1.1.0', '1.3.0'] as const;

const configWorld = fc.record({
  world: hierarchy(fc.constantFrom<Kind>('none', 'ok', 'ok')),
  versions: fc.array(fc.constantFrom(...VERSIONS), { minLength: 8, maxLength: 8 }),
  puts: fc.array(fc.record({ version: fc.constantFrom(...VERSIONS), enabled: fc.boolean(), smuggle: fc.nat() }), {
    minLength: 8,
    maxLength: 8,
  }),
});

test('webhook configuration: each account reads, tests and replaces its own; smuggled ids address nobody else', async () => {
  await fc.assert(
    fc.asyncProperty(configWorld, async ({ world, versions, puts }) => {
      let n = 0;
      const accounts = await accountsOf(world, () => versions[n++ % versions.length]!);
      const byId = new Map(accounts.map((a) => [a.id, a]));
      /** Every stored configuration of the world's accounts, whole (key, timestamps and all). */
      const rows = async () =>
        new Map(
          (
            await sql<{ account_id: string; r: string }>(
              `select account_id::text, to_jsonb(w)::text as r from webhook_configs w where account_id = any(string_to_array(?, ',')::uuid[])`,
              [ids(accounts)],
            )
          ).map((row) => [row.account_id, row.r]),
        );
      let model = await rows();
      const own = (a: Account) => (model.has(a.id) ? (JSON.parse(model.get(a.id)!) as Json) : null);
      /** CONTRACT §10: the caller's endpoint is its own configuration, a partner's else its master's. */
      const endpointOwner = (a: Account) =>
        own(a) ? a : a.role === 'partner' && a.parent && own(byId.get(a.parent)!) ? byId.get(a.parent)! : null;
      const viewOf = (config: Json) => ({
        scope: config.scope,
        url: config.url,
        transformer: config.transformer,
        version: config.version,
        enabled: config.enabled,
        hasSignatureKey: config.signature_key !== null,
        previousKeyExpiresAt: config.previous_key_expires_at && new Date(config.previous_key_expires_at).toISOString(),
        failingSince: config.failing_since ? new Date(config.failing_since).toISOString() : null,
        disabledReason: config.disabled_reason,
        asymmetricSigning: config.asymmetric_signing,
        publicKey: config.asymmetric_signing ? config.signing_public_key : null,
        previousPublicKey: config.asymmetric_signing ? config.previous_signing_public_key : null,
      });

      for (const [i, x] of accounts.entries()) {
        const other = x.parent
          ? byId.get(x.parent)!
          : accounts[(i + 1 + puts[i % puts.length]!.smuggle) % accounts.length]!;
        const otherConfigId = own(other)?.id ?? randomUUID();
        const smuggled = {
          accountId: other.id,
          scope: other.role,
          id: otherConfigId,
          configId: otherConfigId,
          parentId: other.id,
        };

        // GET: its own configuration, or 404 (a child's master's configuration is not its own, CONTRACT §7).
        const plain = await get('/v3/webhook-config', x);
        const mine = own(x);
        assert.equal(
          [plain.status, plain.status === 200 ? plain.body : null],
          mine ? [200, viewOf(mine)] : [404, null],
          `GET of ${x.role} ${x.id}`,
        );
        const query = new URLSearchParams(smuggled).toString();
        const sneaky = await get(`/v3/webhook-config?${query}`, x);
        assert.ok([400, plain.status].includes(sneaky.status), `GET with another's ids: ${sneaky.status}`);
        if (sneaky.status === 200) assert.equal(sneaky.body, plain.body);
        const typed = await app.http
          .get(`/trpc/webhookConfig.get?input=${encodeURIComponent(JSON.stringify(smuggled))}`)
          .set('authorization', `Bearer ${x.token}`);
        if (mine) assert.equal(typed.body.result?.data, viewOf(mine), "typed GET with another's ids");
        else assert.is(typed.status, 404, "typed GET with another's ids");

        // The endpoint test goes to the caller's endpoint (its own, else its master's), signed with that key; no other.
        const seen = hooks.received.length;
        // Smuggled ids are members the test does not define: refused (400), with nothing sent; then the clean request.
        const refused = await post('/v3/webhook-config/test', x, smuggled);
        assert.equal(
          [refused.status, hooks.received.length],
          [400, seen],
          "a test with another's ids is refused, nothing sent",
        );
        const tested = await post('/v3/webhook-config/test', x, {});
        const target = endpointOwner(x);
        if (!target) {
          assert.is(tested.status, x.role === 'partner' ? 403 : 404, `test without an endpoint (${x.role})`);
          assert.is(hooks.received.length, seen, 'nothing sent');
        } else {
          const config = own(target)!;
          assert.equal([tested.status, tested.body.delivered], [200, true], `test: ${JSON.stringify(tested.body)}`);
          const sent = hooks.received.slice(seen);
          assert.equal(
            sent.map((r) => [r.path, r.payload._type]),
            [[new URL(config.url).pathname, 'WebhookTestEvent']],
            "one test event, at the caller's endpoint",
          );
          assert.is(
            sent[0]!.headers['x-webhook-signature'],
            createHmac('sha256', config.signature_key).update(sent[0]!.body).digest('hex'),
            "signed with that endpoint's key",
          );
        }

        const p = puts[i % puts.length]!;
        const newKey = `new-key-${randomUUID()}`;
        const url = hooks.url(`/ok/${x.id}/v${i}`);
        const transformer = x.role === 'partner' ? 'partner-format' : 'default';
        // PUT with another's ids in the body: the body is strict, so it is refused and nothing changes; the clean PUT
        // replaces the caller's own configuration, and nobody else's.
        const sneakyPut = await put('/v3/webhook-config', x, {
          url,
          transformer,
          version: p.version,
          enabled: p.enabled,
          signatureKey: newKey,
          ...smuggled,
        });
        assert.equal(
          [sneakyPut.status, sneakyPut.body.code],
          [400, 'BAD_REQUEST'],
          "a PUT with another's ids is refused",
        );
        assert.equal(await rows(), model, 'a refused PUT changes nothing');
        const replaced = await put('/v3/webhook-config', x, {
          url,
          transformer,
          version: p.version,
          enabled: p.enabled,
          signatureKey: newKey,
        });
        assert.equal(
          [replaced.status, replaced.body],
          [
            200,
            {
              scope: x.role,
              url,
              transformer,
              version: p.version,
              enabled: p.enabled,
              hasSignatureKey: true,
              previousKeyExpiresAt: null,
              failingSince: null,
              disabledReason: p.enabled ? null : 'integrator',
              asymmetricSigning: false,
              publicKey: null,
              previousPublicKey: null,
            },
          ],
        );
        assert.not.ok(replaced.text.includes(newKey), 'the key is never echoed');
        const now = await rows();
        const changed = JSON.parse(now.get(x.id) ?? 'null') as Json | null;
        assert.equal(
          [changed?.url, changed?.signature_key, changed?.scope, changed?.version],
          [url, newKey, x.role, p.version],
          "the caller's own configuration",
        );
        if (mine) assert.is(changed!.id, mine.id, 'replaced in place');
        for (const a of accounts.filter((y) => y !== x))
          assert.is(now.get(a.id), model.get(a.id), `${a.role} ${a.id}'s configuration is untouched by ${x.id}`);
        model = now;

        // Rotating the key (CONTRACT §11): another's ids in the body are refused with nothing changed; the clean
        // rotation changes the caller's own configuration, and nobody else's.
        const rotatedKey = `rotated-key-${randomUUID()}`;
        const sneakyRotation = await post('/v3/webhook-config/rotate-key', x, {
          signatureKey: rotatedKey,
          ...smuggled,
        });
        assert.is(sneakyRotation.status, 400, "a rotation with another's ids is refused");
        assert.equal(await rows(), model, 'and changes nothing');
        const rotated = await post('/v3/webhook-config/rotate-key', x, {
          signatureKey: rotatedKey,
          previousKeyValidFor: 60,
        });
        assert.equal(
          [rotated.status, rotated.body.hasSignatureKey, typeof rotated.body.previousKeyExpiresAt],
          [200, true, 'string'],
          JSON.stringify(rotated.body),
        );
        const afterRotation = await rows();
        const ownRow = JSON.parse(afterRotation.get(x.id)!) as Json;
        assert.equal(
          [ownRow.signature_key, ownRow.previous_signature_key],
          [rotatedKey, newKey],
          "the caller's own key rotated",
        );
        for (const a of accounts.filter((y) => y !== x))
          assert.is(
            afterRotation.get(a.id),
            model.get(a.id),
            `${a.role} ${a.id}'s configuration is untouched by ${x.id}'s rotation`,
          );
        model = afterRotation;
      }

      // Id-addressed paths do not exist; admin procedures refuse integrator tokens. Nothing changes.
      const [x, y] = [accounts[0]!, accounts.at(-1)!];
      const yConfig = own(y)!.id as string;
      for (const res of [
        await get(`/v3/webhook-config/${yConfig}`, x),
        await get(`/v3/webhook-config/${y.id}`, x),
        await put(`/v3/webhook-config/${yConfig}`, x, {
          url: hooks.url('/ok/evil'),
          transformer: 'default',
          version: '1.3.0',
        }),
        await app.http.delete(`/v3/webhook-config/${yConfig}`).set('authorization', `Bearer ${x.token}`),
      ])
        assert.ok([404, 405].includes(res.status), `an id-addressed configuration path: ${res.status}`);
      const admin = await app.http
        .post('/trpc/admin.webhookConfigs.upsert')
        .set('authorization', `Bearer ${x.token}`)
        .send({
          accountId: y.id,
          scope: y.role,
          url: hooks.url('/ok/evil'),
          transformer: y.role === 'partner' ? 'partner-format' : 'default',
          version: '1.3.0',
        });
      assert.is(admin.status, 401, 'an integrator token on an admin procedure');
      const adminRotation = await app.http
        .post('/trpc/admin.webhookConfigs.rotateKey')
        .set('authorization', `Bearer ${x.token}`)
        .send({ accountId: y.id, scope: y.role, signatureKey: `evil-key-${randomUUID()}` });
      assert.is(adminRotation.status, 401, 'an integrator token on the admin rotation');
      assert.equal(await rows(), model, 'nothing changed');
    }),
    { numRuns: RUNS, includeErrorInReport: true, ...replay },
  );
});

// ---------------------------------------------------------------------------------------------------------------
// 3. The delivery log, the feed and replay.

test.run();
