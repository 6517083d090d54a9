import { router } from '../trpc.ts';
import { adminRouter } from './admin.ts';
import { authRouter } from './auth.ts';
import { commandsRouter } from './commands.ts';
import { eventsRouter } from './events.ts';
import { meRouter } from './me.ts';
import { partnerCommandsRouter } from './partner-commands.ts';
import { partnerOrdersRouter } from './partner-orders.ts';
import { webhookConfigRouter } from './webhook-config.ts';
import { webhookDeliveriesRouter } from './webhook-deliveries.ts';

export const appRouter = router({
  admin: adminRouter,
  auth: authRouter,
  commands: commandsRouter,
  events: eventsRouter,
  me: meRouter,
  partnerOrders: partnerOrdersRouter,
  partnerCommands: partnerCommandsRouter,
  webhookConfig: webhookConfigRouter,
  webhookDeliveries: webhookDeliveriesRouter,
});

export type AppRouter = typeof appRouter;
