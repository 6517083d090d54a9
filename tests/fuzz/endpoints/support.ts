import fc from 'fast-check';
import supertest from 'supertest';
import type { Test } from 'uvu';
import { ADMIN_TOKEN } from '../../support/app.ts';
import { appWithMailbox, integrator } from '../../support/integrators.ts';

// What the fuzz suites share: an app with a brand, a partner and its child, the tokens of each kind and none, the ids
// that exist, the strings a client might send, and the last snapshot taken.
// Random and mutated requests to every REST operation of the document and every /trpc admin procedure, with each
// kind of token and none. Properties: never a 5xx; every REST answer is what the document says (the checked agent
// validates status, problem+json and schema of each one); a 4xx changes nothing (a fingerprint of every table before
// and after). Bounded: FUZZ_RUNS requests per part (default 150). On failure fast-check prints the seed and path;
// FUZZ_SEED and FUZZ_PATH replay exactly that run.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
export let app: App;
export let raw: ReturnType<typeof supertest>;
export const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
export const replay = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {};
export const tokens: Record<string, string | null> = { none: null };
const ids: string[] = [];
export const lastSnapshot: { value?: Record<string, string> } = {};
/**
 * FUZZ_STATS=1: how the answers spread over operations and statuses, to see that the generators reach past the guards.
 */
const stats = new Map<string, number>();
export const count = (key: string) => {
  if (process.env.FUZZ_STATS) stats.set(key, (stats.get(key) ?? 0) + 1);
};

/** Gives a suite its own app, accounts and tokens. */
export function withFuzzApp(test: Test) {
  test.before(async () => {
    // Nothing of an earlier suite's app: its ids, its snapshot, its stats.
    ids.length = 0;
    lastSnapshot.value = undefined;
    stats.clear();
    app = await appWithMailbox({ TEST_CLOCK: '1' });
    raw = supertest(app.app);
    const brand = await integrator(app, 'brand');
    const partner = await integrator(app, 'partner');
    const child = await integrator(app, 'partner', partner.accountId);
    await app.admin.call('webhookConfigs.upsert', {
      accountId: partner.accountId,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.3.0',
      signatureKey: 'fuzz-key-0123456789',
    });
    await app.admin.call('webhookConfigs.upsert', {
      accountId: brand.accountId,
      scope: 'brand',
      url: 'https://hooks.example.com/fuzz',
      transformer: 'default',
      version: '1.3.0',
    });
    const job = await app.admin.call<{ apiId: string }>('jobs.create', {
      brandAccountId: brand.accountId,
      partnerId: child.accountId,
      status: 'accepted',
    });
    Object.assign(tokens, {
      brand: brand.accessToken,
      partner: partner.accessToken,
      child: child.accessToken,
      refresh: partner.refreshToken,
      admin: ADMIN_TOKEN,
      garbage: 'eyJhbGciOiJIUzI1NiJ9.e30.x',
    });
    ids.push(job.apiId, brand.accountId, partner.accountId, child.contactId, 'demo-job-04', '*', '1.3.0');
  });
  test.after(() => {
    if (process.env.FUZZ_STATS)
      console.log(
        [...stats]
          .sort()
          .map(([k, n]) => `${n}\t${k}`)
          .join('\n'),
      );
  });
}

/**
 * Ids of other shapes than the store's: almost a uuid, a uuid and more, a number, a long one (CONTRACT §3: they name
 * nothing).
 */
const oddIds = () =>
  fc.oneof(
    fc.uuid().map((u) => `${u}x`),
    fc.uuid().map((u) => `${u.slice(0, -1)}g`),
    fc.uuid().map((u) => u.replaceAll('-', '')),
    fc.constantFrom('0', '-1', 'undefined', 'x'.repeat(255)),
  );
/** Strings PostgreSQL cannot store: U+0000 and unpaired surrogates, alone or inside text (CONTRACT §3). */
const unstorable = () =>
  fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('\u0000', '\ud800', '\udfff', '\udc00\ud800'),
      fc.string({ maxLength: 8 }),
    )
    .map(([a, bad, b]) => a + bad + b);
/** A string a client might send: ids that exist, odd text, traversal, huge, empty, unstorable, ids of other shapes. */
export const text = () =>
  fc.oneof(
    fc.constantFrom(...ids),
    fc.string(),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.constantFrom('', ' ', '..', '%00', '%2F', 'null', '-1', '1e309', '0x10', '2026-02-30T25:61:00Z'),
    fc.string({ minLength: 300, maxLength: 2000 }),
    unstorable(),
    oddIds(),
    fc.constantFrom('constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'prototype'),
  );
/** Nesting from just within the limit (64) to far beyond it, around a value that might be anything. */
export const deeplyNested = () =>
  fc
    .tuple(fc.integer({ min: 60, max: 6000 }), fc.constantFrom('[', '{"a":'))
    .map(([depth, open]) => `{"x":${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}}`);
