import { setJobAppointment } from '../../domain/use-cases/set-job-appointment.ts';
import { setJobYourOrderId } from '../../domain/use-cases/set-job-your-order-id.ts';
import { partnerCommands } from '../schemas.ts';
import { router, signedPartnerProcedure } from '../trpc.ts';

const description = 'Signed with x-webhook-signature (hex HMAC-SHA256 of the raw body) when your resolved partner configuration has a key. '
  + 'Idempotent per _cid: the same body gets the first answer again; another body is 409.';

export const partnerCommandsRouter = router({
  setJobAppointment: signedPartnerProcedure
    .meta({ openapi: { method: 'POST', path: '/v3/commands/partner/appointment', tags: ['partner commands'], protect: true,
      summary: 'SetJobAppointment: confirm or move the appointment of a job assigned to you', description } })
    .input(partnerCommands.setJobAppointment)
    .output(partnerCommands.answer)
    .mutation(({ ctx, input }) => ctx.services.transact((deps) => setJobAppointment(deps, ctx.principal, input))),

  setJobYourOrderId: signedPartnerProcedure
    .meta({ openapi: { method: 'POST', path: '/v3/commands/partner/your-order-id', tags: ['partner commands'], protect: true,
      summary: 'SetJobYourOrderId: set or overwrite your own order id on a job assigned to you', description } })
    .input(partnerCommands.setJobYourOrderId)
    .output(partnerCommands.answer)
    .mutation(({ ctx, input }) => ctx.services.transact((deps) => setJobYourOrderId(deps, ctx.principal, input))),
});
