import { z } from 'zod';
import { DISABLED_REASONS } from '../../domain/endpoint-health.ts';
import { EXAMPLE_EVENT_TYPES } from '../../domain/example-events.ts';
import {
  PAYLOAD_VERSIONS,
  PREVIOUS_KEY_DEFAULT_SECONDS,
  PREVIOUS_KEY_MAX_SECONDS,
  SCOPES,
  SIGNATURE_KEY_MIN_LENGTH,
  TRANSFORMERS,
} from '../../domain/webhook-config.ts';
import type { Meta, ProblemStatus } from '../meta.ts';
import { wireString } from '../wire-text.ts';
import type { RouteContract } from './contracts.ts';
import { count, exactBoolean, exactNumber, httpStatus } from './shared.contract.ts';

// The key's bounds are the domain's (it checks them again for every caller); here they are documented and checked
// first.
export const signatureKey = () => wireString().min(SIGNATURE_KEY_MIN_LENGTH).max(256);
export const previousKeyValidFor = () =>
  exactNumber(z.number().int().min(0).max(PREVIOUS_KEY_MAX_SECONDS))
    .optional()
    .describe(
      `Seconds your current key stays valid beside the new one (0: not at all). Defaults to ${PREVIOUS_KEY_DEFAULT_SECONDS} (a day).`,
    );

/** A configuration as GET /v3/webhook-config shows it (CONTRACT §7, §11). */
const view = z.object({
  scope: z.enum(SCOPES),
  url: z.string().nullable(),
  transformer: z.enum(TRANSFORMERS),
  version: z.enum(PAYLOAD_VERSIONS),
  enabled: z.boolean(),
  hasSignatureKey: z.boolean(),
  previousKeyExpiresAt: z.iso
    .datetime()
    .nullable()
    .describe(
      'Until when the key you rotated out is still valid (webhooks are signed with both keys, commands may be signed with either); null when none is.',
    ),
  failingSince: z.iso
    .datetime()
    .nullable()
    .describe(
      'Since when your endpoint fails: its first attempt without a 2xx after its last 2xx (or after its URL was set, or it was enabled again); null while it answers 2xx.',
    ),
  disabledReason: z
    .enum(DISABLED_REASONS)
    .nullable()
    .describe(
      'Why it is disabled: `failing` (it failed for WEBHOOK_DISABLE_AFTER, 5 days by default), `integrator` (PUT with `enabled: false`); null while enabled.',
    ),
  asymmetricSigning: z
    .boolean()
    .describe('Whether deliveries carry an Ed25519 signature (`v1a,` in `webhook-signature`) beside any HMAC ones.'),
  publicKey: z
    .string()
    .nullable()
    .describe(
      'The key receivers verify `v1a` signatures with: `whpk_` and the base64 of the 32-byte raw Ed25519 public key; null while asymmetric signing is off.',
    ),
  previousPublicKey: z
    .string()
    .nullable()
    .describe(
      'The public key of the pair rotated out, still signing until its window ends (`previousKeyValidFor`); null when none is.',
    ),
});

export const webhookConfig = {
  view,
  put: z.strictObject({
    url: wireString().max(2000).describe('http(s) URL that receives the events; private addresses are refused.'),
    transformer: z.enum(TRANSFORMERS),
    version: z.enum(PAYLOAD_VERSIONS),
    enabled: exactBoolean().optional().describe('Defaults to true.'),
    signatureKey: signatureKey()
      .nullable()
      .optional()
      .describe(
        'HMAC key for signatures. Absent keeps the current key; null removes it. Never shown again. ' +
          'A key or null ends a rotation window at once: the key rotated out counts no more.',
      ),
    asymmetricSigning: exactBoolean()
      .optional()
      .describe(
        'Sign every delivery with an Ed25519 key pair of your endpoint too (Standard Webhooks `v1a`): GET then shows its public key. ' +
          'Absent keeps the current setting (off by default).',
      ),
  }),
  // POST /v3/webhook-config/rotate-key (CONTRACT §11).
  rotateKey: z.strictObject({
    signatureKey: signatureKey()
      .optional()
      .describe(
        'Your new HMAC key (at least 16 characters), never shown again. Absent: a key is made for you and answered this once.',
      ),
    asymmetric: exactBoolean()
      .optional()
      .describe('true: rotate your Ed25519 key pair instead (asymmetric signing must be on).'),
    previousKeyValidFor: previousKeyValidFor(),
  }),
  rotateKeyAnswer: view.extend({
    signatureKey: z
      .string()
      .optional()
      .describe(
        'The key made for you (`whsec_` and the base64 of 32 random bytes) when you sent none: shown in this answer only, never again.',
      ),
  }),
  // POST /v3/webhook-config/test (CONTRACT §10, §11).
  endpointTest: z.strictObject({
    eventType: z
      .enum(EXAMPLE_EVENT_TYPES)
      .optional()
      .describe(
        "The type of the example to send, in your configuration's transformer and version (WebhookTestEvent by default).",
      ),
  }),
  endpointTestAnswer: z.object({
    delivered: z.boolean().describe('Whether your endpoint answered 2xx.'),
    statusCode: httpStatus().nullable().describe('Its status; null when no answer came.'),
    durationMs: count(),
    error: z
      .string()
      .nullable()
      .describe('Why it was not delivered: the error, a refused target, or the start of a non-2xx answer.'),
  }),
};

const meta = (method: 'GET' | 'PUT', summary: string, problems: readonly ProblemStatus[]): Meta => ({
  roles: ['brand', 'partner'],
  openapi: { method, path: '/v3/webhook-config', tags: ['webhooks'], summary },
  rest: { problems },
});

export const webhookConfigRoutes = {
  get: {
    meta: meta('GET', 'Read your own webhook configuration (404 when your account has none of its own)', [404]),
    input: webhookConfig.view.pick({}),
    output: webhookConfig.view,
  },
  put: {
    meta: meta('PUT', 'Replace your own webhook configuration', []),
    input: webhookConfig.put,
    output: webhookConfig.view,
  },
  rotateKey: {
    meta: {
      roles: ['brand', 'partner'],
      openapi: {
        method: 'POST',
        path: '/v3/webhook-config/rotate-key',
        tags: ['webhooks'],
        summary: 'Change your signature key without losing a webhook',
        description:
          'Makes `signatureKey` the key of your own configuration and keeps the current one valid for ' +
          '`previousKeyValidFor` seconds: meanwhile `webhook-signature` carries a `v1,` signature with each key (the ' +
          'new one first), `x-webhook-signature` is made with the new key, and partner commands may be signed with ' +
          'either. A PUT with a `signatureKey` member ends the window. Without `signatureKey`, a key is made for you ' +
          '(`whsec_` and 32 random bytes) and answered this once; an endpoint without a key takes it at once. With ' +
          '`asymmetric: true`, your Ed25519 key pair is rotated the same way: both sign (`v1a,<new> v1a,<previous>`) ' +
          'while the window lasts, and GET shows `previousPublicKey`. 404 when your account has no configuration of ' +
          'its own; 409 when it has no key to rotate (set one with PUT), or asymmetric signing is off.',
        successDescription: 'Your configuration, as GET shows it.',
      },
      rest: { problems: [404, 409] },
    },
    input: webhookConfig.rotateKey,
    output: webhookConfig.rotateKeyAnswer,
  },
  test: {
    meta: {
      roles: ['brand', 'partner'],
      openapi: {
        method: 'POST',
        path: '/v3/webhook-config/test',
        tags: ['webhooks'],
        summary: 'Send a test or example event to your endpoint now',
        description:
          'One signed event, sent at once with the headers, signatures, target rules and timeout of real deliveries ' +
          'and the header `webhook-test: 1` (a disabled endpoint is tested too); nothing is stored. By default a ' +
          'WebhookTestEvent `{ _eid, _type: "WebhookTestEvent", _v, sentAt }`; with `eventType`, a complete example ' +
          "of that type in your configuration's transformer and version, every member present, with a fresh `_eid` " +
          '(the schemas: WebhookTestEvent, DeliveredEvent). At most 10 a minute per account and per endpoint.',
        successDescription: 'What your endpoint did.',
      },
      rest: { problems: [403, 404, 429] },
      // The endpoint answers while nothing is held: no transaction across the request it is sent.
      unit: 'statements',
    },
    input: webhookConfig.endpointTest,
    output: webhookConfig.endpointTestAnswer,
  },
} satisfies Record<string, RouteContract>;
