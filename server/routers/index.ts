import { router } from '../trpc.ts';
import { adminRouter } from './admin.ts';

export const appRouter = router({
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
