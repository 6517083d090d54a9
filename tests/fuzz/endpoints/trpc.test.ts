import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appRouter } from '../../../server/routers/index.ts';
import { snapshot } from '../../support/snapshot.ts';
import { app, count, deeplyNested, lastSnapshot, RUNS, raw, replay, text, tokens, withFuzzApp } from './support.ts';

// Every /trpc procedure, random input, each kind of token: never a 5xx, tRPC's error shapes, a 4xx changes nothing.
const test = suite('fuzz: every endpoint: /trpc');
withFuzzApp(test);

test('/trpc procedures, every one: no 5xx, tRPC error shapes, a 4xx changes nothing', async () => {
  const procedures = Object.entries(
    (appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: string } }> } })._def.procedures,
  ).map(([name, p]) => ({ name, type: p._def.type }));
  assert.ok(procedures.filter((p) => !p.name.startsWith('admin.')).length >= 10, `${procedures.length} procedures`);
  const members = fc.dictionary(
    fc.constantFrom(
      'accountId',
      'apiId',
      'name',
      'role',
      'email',
      'status',
      'url',
      'brandAccountId',
      'partnerId',
      'contactId',
      'deliveryId',
      'parentId',
      'fields',
      'limit',
      'since',
      'cid',
      'seconds',
      'unknownMember',
      '_v',
      '_cid',
      '_type',
      'orderId',
      'jobApiId',
      'after',
      'id',
      'version',
      'transformer',
      '__proto__',
    ),
    text(),
    { maxKeys: 5 },
  );
  const input = fc.oneof(
    fc.jsonValue(),
    members,
    deeplyNested().map((raw) => ({ __raw: raw })),
  );
  const contentType = fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-16le',
    'text/plain',
    'application/jsonx',
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...procedures),
      input,
      fc.constantFrom('admin', 'none', 'brand', 'partner', 'child', 'refresh', 'garbage'),
      contentType,
      async (procedure, value, who, type) => {
        const token = tokens[who];
        const path = `/trpc/${procedure.name}`;
        const json =
          typeof value === 'object' && value !== null && '__raw' in value
            ? String((value as { __raw: string }).__raw)
            : JSON.stringify(value);
        // A query's input is cut to what a URL carries (Node answers a longer one 431 before any route runs).
        let req =
          procedure.type === 'query'
            ? raw.get(`${path}?input=${encodeURIComponent(json.slice(0, 4000))}`)
            : raw.post(path).set('content-type', type).send(json);
        if (token) req = req.set('authorization', `Bearer ${token}`);
        const before = lastSnapshot.value ?? (await snapshot(app.database));
        lastSnapshot.value = undefined;
        const res = await req;
        count(`${procedure.name} ${res.status}`);
        assert.ok(
          res.status < 500,
          `${procedure.name}(${JSON.stringify(value).slice(0, 200)}): ${res.status} ${res.text.slice(0, 300)}`,
        );
        if (res.status >= 400) {
          assert.ok(
            typeof res.body?.error?.message === 'string' && res.body.error.data?.httpStatus === res.status,
            `tRPC error shape: ${res.text.slice(0, 300)}`,
          );
          const after = await snapshot(app.database);
          assert.equal(
            Object.keys(after).filter((t) => after[t] !== before[t]),
            [],
            `${res.status} changed stored data`,
          );
        }
        lastSnapshot.value = res.status >= 400 ? before : await snapshot(app.database);
      },
    ),
    { numRuns: RUNS, ...replay },
  );
});

test.run();
