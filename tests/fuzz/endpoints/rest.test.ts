import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { document } from '../../support/app.ts';
import { snapshot } from '../../support/snapshot.ts';
import { app, count, deeplyNested, lastSnapshot, RUNS, replay, text, tokens, withFuzzApp } from './support.ts';

// Every REST operation of the document, its bodies and queries mutated: never a 5xx, answers as documented, a 4xx
// changes nothing.
const test = suite('fuzz: every endpoint: REST');
withFuzzApp(test);

/** Well-formed JSON that is not an object, and nested arrays and objects past any depth a body needs. */
const oddBodies = () =>
  fc
    .oneof(fc.constantFrom('[]', '"text"', '42', 'null', 'true', '[{}]'), deeplyNested())
    .map((raw) => ({ __raw: raw }));

/**
 * A path segment as a client might write it: percent-encoded, an unpaired surrogate as the bytes UTF-8 has no reading
 * for.
 */
const segment = (value: string) => {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...value]
      .map((c) =>
        /[\ud800-\udfff]/.test(c)
          ? `%ED%${(0x80 | ((c.charCodeAt(0) >> 6) & 0x3f)).toString(16)}%${(0x80 | (c.charCodeAt(0) & 0x3f)).toString(16)}`
          : encodeURIComponent(c),
      )
      .join('');
  }
};

/** Valid bodies and query strings of the document, mutated: a member removed, replaced, or added. */
function mutated(example: unknown): fc.Arbitrary<unknown> {
  if (typeof example !== 'object' || example === null || Array.isArray(example))
    return fc.oneof(fc.constant(example), fc.jsonValue());
  const keys = Object.keys(example);
  return fc.oneof(
    fc.constant(example),
    keys.length > 0
      ? fc.constantFrom(...keys).map((k) => {
          const { [k]: _, ...rest } = example as Record<string, unknown>;
          return rest;
        })
      : fc.constant(example),
    keys.length > 0
      ? fc.tuple(fc.constantFrom(...keys), fc.oneof(fc.jsonValue(), text())).map(([k, v]) => ({ ...example, [k]: v }))
      : fc.constant(example),
    fc.tuple(text(), fc.jsonValue()).map(([k, v]) => ({ ...example, [k]: v })),
    fc.jsonValue(),
  );
}

interface Operation {
  method: 'get' | 'post' | 'put';
  path: string;
  params: string[];
  query: string[];
  example: unknown;
}
function operations(): Operation[] {
  const doc = document() as unknown as {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: { in: string; name: string }[];
          requestBody?: {
            content: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }>;
          };
        }
      >
    >;
  };
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const media = op.requestBody?.content['application/json'];
      return {
        method: method as Operation['method'],
        path,
        params: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        example: media?.example ?? Object.values(media?.examples ?? {})[0]?.value ?? {},
      };
    }),
  );
}

const request = (ops: Operation[]) =>
  fc.constantFrom(...ops).chain((op) =>
    fc.record({
      op: fc.constant(op),
      params: fc.tuple(...op.params.map(() => text()), fc.constant(null)),
      query: fc.dictionary(fc.oneof(fc.constantFrom(...op.query, 'limit', 'x'), fc.string({ maxLength: 8 })), text(), {
        maxKeys: 4,
      }),
      body: fc.oneof(
        mutated(op.example),
        fc.constant(undefined),
        fc.string().map((s) => ({ __raw: s })),
        oddBodies(),
      ),
      // Mostly tokens of the right kind for some path, so that most requests get past the guards to the input checks.
      token: fc.oneof(
        { arbitrary: fc.constantFrom('brand', 'partner', 'child'), weight: 4 },
        { arbitrary: fc.constantFrom(...Object.keys(tokens)), weight: 1 },
      ),
      contentType: fc.constantFrom(
        'application/json',
        'application/json',
        'text/plain',
        'application/x-www-form-urlencoded',
        null,
        'application/json; charset=utf-16le',
        'application/json; charset=latin1',
        'application/jsonx',
      ),
      signature: fc.option(
        fc.oneof(
          fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }),
          fc.string(),
        ),
        { nil: undefined },
      ),
    }),
  );

test('REST: no 5xx, answers as documented, a 4xx changes nothing', async () => {
  const ops = operations();
  assert.ok(ops.length >= 15, `the document lists ${ops.length} operations`);
  await fc.assert(
    fc.asyncProperty(request(ops), async (r) => {
      const path = r.op.params.reduce((p, name, i) => p.replace(`{${name}}`, segment(String(r.params[i]))), r.op.path);
      const query = new URLSearchParams(Object.entries(r.query).map(([k, v]) => [k, String(v)])).toString();
      let req = app.http[r.op.method](`${path}${query ? `?${query}` : ''}`);
      const token = tokens[r.token];
      if (token) req = req.set('authorization', `Bearer ${token}`);
      if (r.signature !== undefined) req = req.set('x-webhook-signature', r.signature);
      if (r.op.method !== 'get' && r.body !== undefined) {
        const payload =
          typeof r.body === 'object' && r.body !== null && '__raw' in r.body
            ? String((r.body as { __raw: string }).__raw)
            : JSON.stringify(r.body);
        if (r.contentType) req = req.set('content-type', r.contentType);
        req = req.send(payload);
      }
      const before = lastSnapshot.value ?? (await snapshot(app.database));
      // A failed run leaves the state unknown: the next run (a shrink, say) takes a fresh snapshot.
      lastSnapshot.value = undefined;
      const res = await req; // the checked agent throws when the answer is not what the document says
      count(`${r.op.method.toUpperCase()} ${r.op.path} ${res.status}`);
      assert.ok(res.status < 500, `${r.op.method.toUpperCase()} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
      const after = await snapshot(app.database);
      if (res.status >= 400)
        assert.equal(
          Object.keys(after).filter((t) => after[t] !== before[t]),
          [],
          `${res.status} changed stored data`,
        );
      lastSnapshot.value = after;
    }),
    { numRuns: RUNS, ...replay },
  );
});

test.run();
