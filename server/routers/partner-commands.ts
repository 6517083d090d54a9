import { setJobAppointment } from '../../domain/use-cases/set-job-appointment.ts';
import { setJobYourOrderId } from '../../domain/use-cases/set-job-your-order-id.ts';
import { signedProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { partnerCommandRoutes } from './partner-commands.contract.ts';

export const partnerCommandsRouter = router({
  setJobAppointment: signedProcedure
    .meta(partnerCommandRoutes.setJobAppointment.meta)
    .input(partnerCommandRoutes.setJobAppointment.input)
    .output(partnerCommandRoutes.setJobAppointment.output)
    .mutation(({ ctx, input }) => setJobAppointment(ctx.deps, ctx.principal, input)),

  setJobYourOrderId: signedProcedure
    .meta(partnerCommandRoutes.setJobYourOrderId.meta)
    .input(partnerCommandRoutes.setJobYourOrderId.input)
    .output(partnerCommandRoutes.setJobYourOrderId.output)
    .mutation(({ ctx, input }) => setJobYourOrderId(ctx.deps, ctx.principal, input)),
});
