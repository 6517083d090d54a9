import { getWebhookConfig } from '../../domain/use-cases/get-webhook-config.ts';
import { testWebhookEndpoint } from '../../domain/use-cases/test-webhook-endpoint.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { webhookConfig } from './webhook-config.contract.ts';
import { integratorProcedure, router, type Meta, type ProblemStatus } from '../trpc.ts';

const meta = (method: 'GET' | 'PUT', summary: string, problems: readonly ProblemStatus[]): Meta =>
  ({ openapi: { method, path: '/v3/webhook-config', tags: ['webhooks'], summary }, rest: { problems } });

/** An integrator's own configuration; its scope is the caller's role. */
export const webhookConfigRouter = router({
  get: integratorProcedure
    .meta(meta('GET', 'Read your own webhook configuration (404 when your account has none of its own)', [404]))
    .input(webhookConfig.view.pick({}))
    .output(webhookConfig.view)
    .query(async ({ ctx }) => {
      const { accountId, role } = ctx.principal;
      const { accountId: _, ...view } = (await getWebhookConfig(ctx.deps, { accountId, scope: role })).view();
      return view;
    }),
  put: integratorProcedure
    .meta(meta('PUT', 'Replace your own webhook configuration', []))
    .input(webhookConfig.put)
    .output(webhookConfig.view)
    .mutation(async ({ ctx, input }) => {
      const { accountId, role } = ctx.principal;
      const config = await upsertWebhookConfig(ctx.deps, { ...input, accountId, scope: role, enabled: input.enabled ?? true });
      const { accountId: _, ...view } = config.view();
      return view;
    }),
  test: integratorProcedure
    .meta({
      openapi: { method: 'POST', path: '/v3/webhook-config/test', tags: ['webhooks'], summary: 'Send a test event to your endpoint now',
        description: 'One signed WebhookTestEvent `{ _eid, _type: "WebhookTestEvent", _v, sentAt }`, sent at once with the headers, '
          + 'signatures, target rules and timeout of real deliveries (a disabled endpoint is tested too); nothing is stored. '
          + 'At most 10 a minute per account and per endpoint.',
        successDescription: 'What your endpoint did.' },
      rest: { problems: [403, 404, 429] },
      // The endpoint answers while nothing is held: no transaction across the request it is sent.
      unit: 'statements',
    })
    .input(webhookConfig.endpointTest)
    .output(webhookConfig.endpointTestAnswer)
    .mutation(({ ctx }) => testWebhookEndpoint(ctx.deps, ctx.principal)),
});
