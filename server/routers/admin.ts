import { DomainError } from '../../domain/errors.ts';
import { assignJob } from '../../domain/use-cases/assign-job.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { createInvoice } from '../../domain/use-cases/create-invoice.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { getDelivery } from '../../domain/use-cases/get-delivery.ts';
import { listDeliveries } from '../../domain/use-cases/list-deliveries.ts';
import { lookUpCommand } from '../../domain/use-cases/look-up-command.ts';
import { redeliver, redeliverFailedOf } from '../../domain/use-cases/redeliver.ts';
import { rotateSignatureKey } from '../../domain/use-cases/rotate-signature-key.ts';
import { setContactApiAccess } from '../../domain/use-cases/set-contact-api-access.ts';
import { setJobStatus } from '../../domain/use-cases/set-job-status.ts';
import { upsertCancellationReason } from '../../domain/use-cases/upsert-cancellation-reason.ts';
import { upsertOrderMapping } from '../../domain/use-cases/upsert-order-mapping.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { adminProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { deliveryDetailView, deliveryView, jobView } from '../views.ts';
import { adminRoutes } from './admin.contract.ts';
import { consoleProcedures } from './admin-console.ts';

const ok = { ok: true } as const;

/** Internal tools only: served at /trpc, never on the REST face. */
export const adminRouter = router({
  accounts: router({
    create: adminProcedure
      .meta(adminRoutes.accounts.create.meta)
      .input(adminRoutes.accounts.create.input)
      .mutation(async ({ ctx, input }) => {
        const account = await createAccount(ctx.deps, input);
        return { id: account.id };
      }),
    ...consoleProcedures.accounts,
  }),
  contacts: router({
    create: adminProcedure
      .meta(adminRoutes.contacts.create.meta)
      .input(adminRoutes.contacts.create.input)
      .mutation(async ({ ctx, input }) => {
        const contact = await createContact(ctx.deps, input);
        return { id: contact.id };
      }),
    setApiAccess: adminProcedure
      .meta(adminRoutes.contacts.setApiAccess.meta)
      .input(adminRoutes.contacts.setApiAccess.input)
      .mutation(async ({ ctx, input }) => {
        await setContactApiAccess(ctx.deps, input);
        return ok;
      }),
  }),
  webhookConfigs: router({
    upsert: adminProcedure
      .meta(adminRoutes.webhookConfigs.upsert.meta)
      .input(adminRoutes.webhookConfigs.upsert.input)
      .mutation(async ({ ctx, input }) => {
        const config = await upsertWebhookConfig(ctx.deps, input);
        return config.view();
      }),
    rotateKey: adminProcedure
      .meta(adminRoutes.webhookConfigs.rotateKey.meta)
      .input(adminRoutes.webhookConfigs.rotateKey.input)
      .mutation(async ({ ctx, input }) => {
        const { config, generatedKey } = await rotateSignatureKey(ctx.deps, input);
        return { ...config.view(), ...(generatedKey !== null && { signatureKey: generatedKey }) };
      }),
    ...consoleProcedures.webhookConfigs,
  }),
  jobs: router({
    create: adminProcedure
      .meta(adminRoutes.jobs.create.meta)
      .input(adminRoutes.jobs.create.input)
      .mutation(async ({ ctx, input }) => jobView(await createJob(ctx.deps, input))),
    assign: adminProcedure
      .meta(adminRoutes.jobs.assign.meta)
      .input(adminRoutes.jobs.assign.input)
      .mutation(async ({ ctx, input }) => jobView(await assignJob(ctx.deps, input))),
    setStatus: adminProcedure
      .meta(adminRoutes.jobs.setStatus.meta)
      .input(adminRoutes.jobs.setStatus.input)
      .mutation(async ({ ctx, input }) => jobView(await setJobStatus(ctx.deps, input))),
    ...consoleProcedures.jobs,
  }),
  invoices: router({
    create: adminProcedure
      .meta(adminRoutes.invoices.create.meta)
      .input(adminRoutes.invoices.create.input)
      .mutation(async ({ ctx, input }) => {
        const invoice = await createInvoice(ctx.deps, input);
        return { id: invoice.id };
      }),
  }),
  cancellationReasons: router({
    upsert: adminProcedure
      .meta(adminRoutes.cancellationReasons.upsert.meta)
      .input(adminRoutes.cancellationReasons.upsert.input)
      .mutation(async ({ ctx, input }) => {
        await upsertCancellationReason(ctx.deps, input);
        return ok;
      }),
  }),
  orderMappings: router({
    upsert: adminProcedure
      .meta(adminRoutes.orderMappings.upsert.meta)
      .input(adminRoutes.orderMappings.upsert.input)
      .mutation(async ({ ctx, input }) => {
        await upsertOrderMapping(ctx.deps, input);
        return ok;
      }),
  }),
  deliveries: router({
    list: adminProcedure
      .meta(adminRoutes.deliveries.list.meta)
      .input(adminRoutes.deliveries.list.input)
      .query(async ({ ctx, input }) => ({ items: (await listDeliveries(ctx.deps, input ?? {})).map(deliveryView) })),
    ...consoleProcedures.deliveries,
    get: adminProcedure
      .meta(adminRoutes.deliveries.get.meta)
      .input(adminRoutes.deliveries.get.input)
      .query(async ({ ctx, input }) => deliveryDetailView(await getDelivery(ctx.deps, input.deliveryId))),
    redeliver: adminProcedure
      .meta(adminRoutes.deliveries.redeliver.meta)
      .input(adminRoutes.deliveries.redeliver.input)
      .mutation(async ({ ctx, input }) => {
        await redeliver(ctx.deps, input.deliveryId);
        return ok;
      }),
    redeliverFailed: adminProcedure
      .meta(adminRoutes.deliveries.redeliverFailed.meta)
      .input(adminRoutes.deliveries.redeliverFailed.input)
      .mutation(({ ctx, input }) => redeliverFailedOf(ctx.deps, input.accountId, input.since)),
  }),
  commands: router({
    get: adminProcedure
      .meta(adminRoutes.commands.get.meta)
      .input(adminRoutes.commands.get.input)
      .query(async ({ ctx, input }) => {
        const state = await lookUpCommand(ctx.deps, input.accountId, input.cid);
        return state.status === 'accepted'
          ? { status: state.status, result: null, finishedAt: null }
          : { status: state.status, result: state.result, finishedAt: state.finishedAt.toISOString() };
      }),
    ...consoleProcedures.commands,
  }),
  gauges: router(consoleProcedures.gauges),
  testClock: router({
    advance: adminProcedure
      .meta(adminRoutes.testClock.advance.meta)
      .input(adminRoutes.testClock.advance.input)
      .mutation(({ ctx, input }) => {
        const clock = ctx.services.testClock;
        if (!clock) throw new DomainError('FEATURE_DISABLED', 'The test clock is enabled only with TEST_CLOCK=1.');
        return { now: clock.advance(input.seconds).toISOString() };
      }),
  }),
});
