import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Meta } from '../../server/meta.ts';
import {
  adminProcedure,
  guardedProcedure,
  publicProcedure,
  signedProcedure,
} from '../../server/pipeline/procedures.ts';
import { routeTable } from '../../server/routers/contracts.ts';
import { appRouter } from '../../server/routers/index.ts';

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

const bases = { publicProcedure, adminProcedure, guardedProcedure, signedProcedure };
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

test('a guarded procedure takes its roles from its route, which names some; a public or admin one names none', () => {
  const used = new Set<string>();
  for (const { path, _def } of procedures) {
    const found = basesOf(_def.middlewares);
    assert.is(found.length, 1, `${path}: built on one base procedure (${found.map(([name]) => name).join(', ')})`);
    const [name] = found[0]!;
    used.add(name);
    const roles = routeTable[path]!.meta.roles;
    if (name === 'guardedProcedure' || name === 'signedProcedure')
      assert.ok(roles && roles.length > 0, `${path}: roles`);
    else assert.is(roles, undefined, `${path}: no roles`);
  }
  assert.equal([...used].sort(), ['adminProcedure', 'guardedProcedure', 'publicProcedure', 'signedProcedure']);
  assert.equal(routeTable['commands.send']!.meta.roles, ['brand']);
  assert.equal(routeTable['partnerCommands.setJobAppointment']!.meta.roles, ['partner']);
  assert.equal(routeTable['partnerOrders.poll']!.meta.roles, ['brand', 'partner']);
});

test.run();
