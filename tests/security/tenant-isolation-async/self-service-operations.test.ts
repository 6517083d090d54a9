import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { document } from '../../support/app.ts';
import type { Json } from './support.ts';

// The self-service operations of the asynchronous paths: the list the suites beside this file cover.
const test = suite('tenant isolation: the self-service operations covered');

/** Every parameter and (nested) body property name of an operation, $refs followed. */
function fieldNames(doc: Json, op: Json): string[] {
  const names: string[] = (op.parameters ?? []).map((p: Json) => p.name);
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const n = node as Json;
    if (typeof n.$ref === 'string')
      walk(
        n.$ref
          .slice(2)
          .split('/')
          .reduce((at: Json | undefined, part: string) => at?.[part], doc),
      );
    if (n.properties && typeof n.properties === 'object') names.push(...Object.keys(n.properties));
    for (const value of Object.values(n)) walk(value);
  };
  walk(op.requestBody);
  return names;
}

test('the self-service operations are the ones covered here, and none takes an account, scope or configuration', () => {
  const doc = document() as Json;
  const operations: string[] = [];
  const named: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    if (!/^\/v3\/(webhook-|events|commands$|commands\/\{)/.test(path)) continue;
    for (const [method, op] of Object.entries(item as Json)) {
      operations.push(`${method.toUpperCase()} ${path}`);
      named.push(
        ...fieldNames(doc, op)
          .filter((f) => /account|scope|config|endpoint|parent|tenant|owner/i.test(f))
          .map((f) => `${method.toUpperCase()} ${path}: ${f}`),
      );
    }
  }
  // A new operation here is a new way in: this file must cover it before the list below grows.
  assert.equal(operations.sort(), [
    'GET /v3/commands/{cid}',
    'GET /v3/events',
    'GET /v3/webhook-config',
    'GET /v3/webhook-deliveries',
    'GET /v3/webhook-deliveries/stats',
    'GET /v3/webhook-deliveries/{id}',
    'POST /v3/commands',
    'POST /v3/webhook-config/rotate-key',
    'POST /v3/webhook-config/test',
    'POST /v3/webhook-deliveries/redeliver-failed',
    'POST /v3/webhook-deliveries/{id}/redeliver',
    'PUT /v3/webhook-config',
  ]);
  assert.equal(named, [], 'no parameter or body field names an account, a scope or a configuration');
  assert.ok(fieldNames(doc, doc.paths['/v3/commands'].post).includes('orderId'), 'the walk reaches the body fields');
});

test.run();
