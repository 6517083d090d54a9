import { setJobAppointment } from '../../domain/use-cases/set-job-appointment.ts';
import { setJobYourOrderId } from '../../domain/use-cases/set-job-your-order-id.ts';
import { partnerCommands } from './partner-commands.contract.ts';
import { router, signedPartnerProcedure, type Meta } from '../trpc.ts';

const description =
  'Signed with x-webhook-signature (hex HMAC-SHA256 of the raw body) when your resolved partner configuration has a key. ' +
  'Idempotent per _cid: the same body gets the first answer again; another body is 409. Checks in this order: token (401), ' +
  'signature (401), body (400), _cid replay, job (404), ownership (403: the job must be assigned to you or to one of your children).';
const meta = (path: string, summary: string, exactlyOneOf: readonly string[]): Meta => ({
  openapi: {
    method: 'POST',
    path: path as `/${string}`,
    tags: ['partner commands'],
    summary,
    description,
    requestHeaders: partnerCommands.signatureHeader,
  },
  rest: { problems: [403, 404, 409], exactlyOneOf },
});

export const partnerCommandsRouter = router({
  setJobAppointment: signedPartnerProcedure
    .meta(
      meta(
        '/v3/commands/partner/appointment',
        'SetJobAppointment: confirm or move the appointment of a job assigned to you',
        partnerCommands.identifiers.setJobAppointment,
      ),
    )
    .input(partnerCommands.setJobAppointment)
    .output(partnerCommands.answer)
    .mutation(({ ctx, input }) => setJobAppointment(ctx.deps, ctx.principal, input)),

  setJobYourOrderId: signedPartnerProcedure
    .meta(
      meta(
        '/v3/commands/partner/your-order-id',
        'SetJobYourOrderId: set or overwrite your own order id on a job assigned to you',
        partnerCommands.identifiers.setJobYourOrderId,
      ),
    )
    .input(partnerCommands.setJobYourOrderId)
    .output(partnerCommands.answer)
    .mutation(({ ctx, input }) => setJobYourOrderId(ctx.deps, ctx.principal, input)),
});
