import { DomainError } from '../../domain/errors.ts';
import { assignJob } from '../../domain/use-cases/assign-job.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { createInvoice } from '../../domain/use-cases/create-invoice.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { getDelivery } from '../../domain/use-cases/get-delivery.ts';
import { listDeliveries } from '../../domain/use-cases/list-deliveries.ts';
import { redeliver, redeliverFailedOf } from '../../domain/use-cases/redeliver.ts';
import { lookUpCommand } from '../../domain/use-cases/look-up-command.ts';
import { rotateSignatureKey } from '../../domain/use-cases/rotate-signature-key.ts';
import { setContactApiAccess } from '../../domain/use-cases/set-contact-api-access.ts';
import { setJobStatus } from '../../domain/use-cases/set-job-status.ts';
import { upsertCancellationReason } from '../../domain/use-cases/upsert-cancellation-reason.ts';
import { upsertOrderMapping } from '../../domain/use-cases/upsert-order-mapping.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { admin } from './admin.contract.ts';
import { adminProcedure, router } from '../trpc.ts';
import { deliveryDetailView, deliveryView, jobView } from '../views.ts';

const ok = { ok: true } as const;

/** Internal tools only: served at /trpc, never on the REST face. */
export const adminRouter = router({
  accounts: router({
    create: adminProcedure.input(admin.createAccount).mutation(async ({ ctx, input }) => {
      const account = await createAccount(ctx.deps, input);
      return { id: account.id };
    }),
  }),
  contacts: router({
    create: adminProcedure.input(admin.createContact).mutation(async ({ ctx, input }) => {
      const contact = await createContact(ctx.deps, input);
      return { id: contact.id };
    }),
    setApiAccess: adminProcedure.input(admin.setApiAccess).mutation(async ({ ctx, input }) => {
      await setContactApiAccess(ctx.deps, input);
      return ok;
    }),
  }),
  webhookConfigs: router({
    upsert: adminProcedure.input(admin.upsertWebhookConfig).mutation(async ({ ctx, input }) => {
      const config = await upsertWebhookConfig(ctx.deps, input);
      return config.view();
    }),
    rotateKey: adminProcedure.input(admin.rotateWebhookKey).mutation(async ({ ctx, input }) => {
      const { config, generatedKey } = await rotateSignatureKey(ctx.deps, input);
      return { ...config.view(), ...(generatedKey !== null && { signatureKey: generatedKey }) };
    }),
  }),
  jobs: router({
    create: adminProcedure
      .input(admin.createJob)
      .mutation(async ({ ctx, input }) => jobView(await createJob(ctx.deps, input))),
    assign: adminProcedure
      .input(admin.assignJob)
      .mutation(async ({ ctx, input }) => jobView(await assignJob(ctx.deps, input))),
    setStatus: adminProcedure
      .input(admin.setJobStatus)
      .mutation(async ({ ctx, input }) => jobView(await setJobStatus(ctx.deps, input))),
  }),
  invoices: router({
    create: adminProcedure.input(admin.createInvoice).mutation(async ({ ctx, input }) => {
      const invoice = await createInvoice(ctx.deps, input);
      return { id: invoice.id };
    }),
  }),
  cancellationReasons: router({
    upsert: adminProcedure.input(admin.upsertCancellationReason).mutation(async ({ ctx, input }) => {
      await upsertCancellationReason(ctx.deps, input);
      return ok;
    }),
  }),
  orderMappings: router({
    upsert: adminProcedure.input(admin.upsertOrderMapping).mutation(async ({ ctx, input }) => {
      await upsertOrderMapping(ctx.deps, input);
      return ok;
    }),
  }),
  deliveries: router({
    list: adminProcedure
      .input(admin.listDeliveries)
      .query(async ({ ctx, input }) => ({ items: (await listDeliveries(ctx.deps, input ?? {})).map(deliveryView) })),
    get: adminProcedure
      .input(admin.getDelivery)
      .query(async ({ ctx, input }) => deliveryDetailView(await getDelivery(ctx.deps, input.deliveryId))),
    redeliver: adminProcedure.input(admin.redeliver).mutation(async ({ ctx, input }) => {
      await redeliver(ctx.deps, input.deliveryId);
      return ok;
    }),
    redeliverFailed: adminProcedure
      .input(admin.redeliverFailed)
      .mutation(({ ctx, input }) => redeliverFailedOf(ctx.deps, input.accountId, input.since)),
  }),
  commands: router({
    get: adminProcedure.input(admin.getCommand).query(async ({ ctx, input }) => {
      const state = await lookUpCommand(ctx.deps, input.accountId, input.cid);
      return state.status === 'accepted'
        ? { status: state.status, result: null, finishedAt: null }
        : { status: state.status, result: state.result, finishedAt: state.finishedAt.toISOString() };
    }),
  }),
  testClock: router({
    advance: adminProcedure.input(admin.advanceClock).mutation(({ ctx, input }) => {
      const clock = ctx.services.testClock;
      if (!clock) throw new DomainError('FEATURE_DISABLED', 'The test clock is enabled only with TEST_CLOCK=1.');
      return { now: clock.advance(input.seconds).toISOString() };
    }),
  }),
});
