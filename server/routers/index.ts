import { router } from '../trpc.ts';
import { adminRouter } from './admin.ts';
import { authRouter } from './auth.ts';
import { commandsRouter } from './commands.ts';
import { partnerCommandsRouter } from './partner-commands.ts';
import { partnerOrdersRouter } from './partner-orders.ts';
import { webhookConfigRouter } from './webhook-config.ts';

export const appRouter = router({
  admin: adminRouter,
  auth: authRouter,
  commands: commandsRouter,
  partnerOrders: partnerOrdersRouter,
  partnerCommands: partnerCommandsRouter,
  webhookConfig: webhookConfigRouter,
});

export type AppRouter = typeof appRouter;
