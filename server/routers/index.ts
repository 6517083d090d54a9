import { router } from '../trpc.ts';
import { adminRouter } from './admin.ts';
import { authRouter } from './auth.ts';
import { webhookConfigRouter } from './webhook-config.ts';

export const appRouter = router({
  admin: adminRouter,
  auth: authRouter,
  webhookConfig: webhookConfigRouter,
});

export type AppRouter = typeof appRouter;
