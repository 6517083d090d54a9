import type { ZodType } from 'zod';
import type { Meta } from '../meta.ts';
import { adminRoutes } from './admin.contract.ts';
import { authRoutes } from './auth.contract.ts';
import { commandRoutes } from './commands.contract.ts';
import { eventRoutes } from './events.contract.ts';
import { meRoutes } from './me.contract.ts';
import { partnerCommandRoutes } from './partner-commands.contract.ts';
import { partnerOrderRoutes } from './partner-orders.contract.ts';
import { webhookConfigRoutes } from './webhook-config.contract.ts';
import { webhookDeliveryRoutes } from './webhook-deliveries.contract.ts';

/**
 * One procedure's contract: its meta (the REST operation, the roles its guard serves, how it runs in the unit of work),
 * its input and, where it declares one, its output. The routers build their procedures from these; the fair-use door,
 * the HTTP app and the document read them here.
 */
export interface RouteContract {
  meta: Meta;
  input: ZodType;
  output?: ZodType;
}

/** Routes by the procedure's path as tRPC names it (`commands.send`, `admin.accounts.create`). */
export type RouteTable = Readonly<Record<string, RouteContract>>;

/** A router's routes under its name in the app router. */
const under = (prefix: string, routes: Record<string, RouteContract>) =>
  Object.entries(routes).map(([name, route]) => [`${prefix}.${name}`, route] as const);

/**
 * The app router's routes (server/routers/index.ts), in its order, by the paths it gives its procedures:
 * tests/server/route-table.test.ts holds the two together.
 */
export const routeTable: RouteTable = Object.fromEntries([
  ...Object.entries(adminRoutes).flatMap(([group, routes]) => under(`admin.${group}`, routes)),
  ...under('auth', authRoutes),
  ...under('commands', commandRoutes),
  ...under('events', eventRoutes),
  ...under('me', meRoutes),
  ...under('partnerOrders', partnerOrderRoutes),
  ...under('partnerCommands', partnerCommandRoutes),
  ...under('webhookConfig', webhookConfigRoutes),
  ...under('webhookDeliveries', webhookDeliveryRoutes),
]);
