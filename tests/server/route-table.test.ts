import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Meta } from '../../server/meta.ts';
import { routeTable } from '../../server/routers/contracts.ts';
import { appRouter } from '../../server/routers/index.ts';
import {
  adminProcedure,
  brandProcedure,
  integratorProcedure,
  partnerProcedure,
  publicProcedure,
  signedPartnerProcedure,
} from '../../server/pipeline/procedures.ts';

const test = suite('the route table and the router agree');

// The one reader of tRPC's internals besides tRPC and trpc-to-openapi (tests/architecture.test.ts refuses any in the
// code): the router's procedures, to hold them to the table the door, the app and the document read instead.
interface Internals {
  _def: { meta?: Meta; inputs: unknown[]; output?: unknown; middlewares: unknown[] };
}
const internals = (procedure: unknown) => procedure as Internals;
const procedures = Object.entries(
  (appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures,
).map(([path, procedure]) => ({ path, ...internals(procedure) }));

const bases = {
  publicProcedure,
  adminProcedure,
  brandProcedure,
  partnerProcedure,
  integratorProcedure,
  signedPartnerProcedure,
};
/** The base procedures a procedure is built on: each base's own step (its last middleware) is among its steps. */
const basesOf = (middlewares: unknown[]) =>
  Object.entries(bases).filter(([, base]) => middlewares.includes(internals(base)._def.middlewares.at(-1)));

test("every procedure of the router is in the table, by tRPC's path, and nothing else is", () => {
  assert.equal(Object.keys(routeTable).sort(), procedures.map(({ path }) => path).sort());
  assert.ok(procedures.length > 30, 'the walk found the procedures');
  assert.ok('commands.send' in routeTable && 'admin.accounts.create' in routeTable);
});

test("each procedure is built from its route: the route's meta, input and output", () => {
  for (const { path, _def } of procedures) {
    const route = routeTable[path]!;
    assert.equal(_def.meta, route.meta, `${path}: meta`);
    assert.ok(_def.inputs.length === 1 && _def.inputs[0] === route.input, `${path}: input`);
    assert.ok(_def.output === route.output, `${path}: output`);
  }
});

test('a route names the roles its procedure is guarded with, and a public or admin one none', () => {
  const guarded = new Set<string>();
  for (const { path, _def } of procedures) {
    const found = basesOf(_def.middlewares);
    assert.is(found.length, 1, `${path}: built on one base procedure (${found.map(([name]) => name).join(', ')})`);
    const [name, base] = found[0]!;
    const roles = internals(base)._def.meta?.roles;
    assert.equal(routeTable[path]!.meta.roles, roles, `${path}: the roles of ${name}`);
    if (roles) guarded.add(name);
  }
  // Every guarded base is in use, so each of their roles was compared.
  assert.equal([...guarded].sort(), [
    'brandProcedure',
    'integratorProcedure',
    'partnerProcedure',
    'signedPartnerProcedure',
  ]);
  assert.equal(internals(integratorProcedure)._def.meta?.roles, ['brand', 'partner']);
});

test.run();
