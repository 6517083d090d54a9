import { getWebhookConfig } from '../../domain/use-cases/get-webhook-config.ts';
import { rotateSignatureKey } from '../../domain/use-cases/rotate-signature-key.ts';
import { testWebhookEndpoint } from '../../domain/use-cases/test-webhook-endpoint.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { guardedProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { webhookConfigRoutes } from './webhook-config.contract.ts';

/** An integrator's own configuration; its scope is the caller's role. */
export const webhookConfigRouter = router({
  get: guardedProcedure
    .meta(webhookConfigRoutes.get.meta)
    .input(webhookConfigRoutes.get.input)
    .output(webhookConfigRoutes.get.output)
    .query(async ({ ctx }) => {
      const { accountId, role } = ctx.principal;
      const { accountId: _, ...view } = (await getWebhookConfig(ctx.deps, { accountId, scope: role })).view();
      return view;
    }),
  put: guardedProcedure
    .meta(webhookConfigRoutes.put.meta)
    .input(webhookConfigRoutes.put.input)
    .output(webhookConfigRoutes.put.output)
    .mutation(async ({ ctx, input }) => {
      const { accountId, role } = ctx.principal;
      const config = await upsertWebhookConfig(ctx.deps, {
        ...input,
        accountId,
        scope: role,
        enabled: input.enabled ?? true,
      });
      const { accountId: _, ...view } = config.view();
      return view;
    }),
  rotateKey: guardedProcedure
    .meta(webhookConfigRoutes.rotateKey.meta)
    .input(webhookConfigRoutes.rotateKey.input)
    .output(webhookConfigRoutes.rotateKey.output)
    .mutation(async ({ ctx, input }) => {
      const { accountId, role } = ctx.principal;
      const { config, generatedKey } = await rotateSignatureKey(ctx.deps, { ...input, accountId, scope: role });
      const { accountId: _, ...view } = config.view();
      return { ...view, ...(generatedKey !== null && { signatureKey: generatedKey }) };
    }),
  test: guardedProcedure
    .meta(webhookConfigRoutes.test.meta)
    .input(webhookConfigRoutes.test.input)
    .output(webhookConfigRoutes.test.output)
    .mutation(({ ctx, input }) => testWebhookEndpoint(ctx.deps, ctx.principal, input.eventType, ctx.trace?.() ?? null)),
});
