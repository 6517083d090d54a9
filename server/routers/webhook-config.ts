import { getWebhookConfig } from '../../domain/use-cases/get-webhook-config.ts';
import { rotateSignatureKey } from '../../domain/use-cases/rotate-signature-key.ts';
import { testWebhookEndpoint } from '../../domain/use-cases/test-webhook-endpoint.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { webhookConfig } from './webhook-config.contract.ts';
import { integratorProcedure, router, type Meta, type ProblemStatus } from '../trpc.ts';

const meta = (method: 'GET' | 'PUT', summary: string, problems: readonly ProblemStatus[]): Meta => ({
  openapi: { method, path: '/v3/webhook-config', tags: ['webhooks'], summary },
  rest: { problems },
});

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
      const config = await upsertWebhookConfig(ctx.deps, {
        ...input,
        accountId,
        scope: role,
        enabled: input.enabled ?? true,
      });
      const { accountId: _, ...view } = config.view();
      return view;
    }),
  rotateKey: integratorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v3/webhook-config/rotate-key',
        tags: ['webhooks'],
        summary: 'Change your signature key without losing a webhook',
        description:
          'Makes `signatureKey` the key of your own configuration and keeps the current one valid for `previousKeyValidFor` ' +
          'seconds: meanwhile `webhook-signature` carries a `v1,` signature with each key (the new one first), `x-webhook-signature` ' +
          'is made with the new key, and partner commands may be signed with either. A PUT with a `signatureKey` member ends the window. ' +
          'Without `signatureKey`, a key is made for you (`whsec_` and 32 random bytes) and answered this once; an endpoint without a ' +
          'key takes it at once. With `asymmetric: true`, your Ed25519 key pair is rotated the same way: both sign (`v1a,<new> ' +
          'v1a,<previous>`) while the window lasts, and GET shows `previousPublicKey`. 404 when your account has no configuration ' +
          'of its own; 409 when it has no key to rotate (set one with PUT), or asymmetric signing is off.',
        successDescription: 'Your configuration, as GET shows it.',
      },
      rest: { problems: [404, 409] },
    })
    .input(webhookConfig.rotateKey)
    .output(webhookConfig.rotateKeyAnswer)
    .mutation(async ({ ctx, input }) => {
      const { accountId, role } = ctx.principal;
      const { config, generatedKey } = await rotateSignatureKey(ctx.deps, { ...input, accountId, scope: role });
      const { accountId: _, ...view } = config.view();
      return { ...view, ...(generatedKey !== null && { signatureKey: generatedKey }) };
    }),
  test: integratorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v3/webhook-config/test',
        tags: ['webhooks'],
        summary: 'Send a test or example event to your endpoint now',
        description:
          'One signed event, sent at once with the headers, signatures, target rules and timeout of real deliveries and ' +
          'the header `webhook-test: 1` (a disabled endpoint is tested too); nothing is stored. By default a WebhookTestEvent ' +
          '`{ _eid, _type: "WebhookTestEvent", _v, sentAt }`; with `eventType`, a complete example of that type in your ' +
          "configuration's transformer and version, every member present, with a fresh `_eid` (the schemas: WebhookTestEvent, " +
          'DeliveredEvent). At most 10 a minute per account and per endpoint.',
        successDescription: 'What your endpoint did.',
      },
      rest: { problems: [403, 404, 429] },
      // The endpoint answers while nothing is held: no transaction across the request it is sent.
      unit: 'statements',
    })
    .input(webhookConfig.endpointTest)
    .output(webhookConfig.endpointTestAnswer)
    .mutation(({ ctx, input }) => testWebhookEndpoint(ctx.deps, ctx.principal, input.eventType)),
});
