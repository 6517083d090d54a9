import { z } from 'zod';
import { PAYLOAD_VERSIONS, SCOPES, SIGNATURE_KEY_MIN_LENGTH, TRANSFORMERS } from '../../domain/webhook-config.ts';
import { wireString } from '../wire-text.ts';
import { count, exactBoolean, httpStatus } from './shared.contract.ts';

export const webhookConfig = {
  view: z.object({
    scope: z.enum(SCOPES),
    url: z.string().nullable(),
    transformer: z.enum(TRANSFORMERS),
    version: z.enum(PAYLOAD_VERSIONS),
    enabled: z.boolean(),
    hasSignatureKey: z.boolean(),
  }),
  put: z.strictObject({
    url: wireString().max(2000).describe('http(s) URL that receives the events; private addresses are refused.'),
    transformer: z.enum(TRANSFORMERS),
    version: z.enum(PAYLOAD_VERSIONS),
    enabled: exactBoolean().optional().describe('Defaults to true.'),
    signatureKey: wireString().min(SIGNATURE_KEY_MIN_LENGTH).max(256).nullable().optional()
      .describe('HMAC key for signatures. Absent keeps the current key; null removes it. Never shown again.'),
  }),
  // POST /v3/webhook-config/test (CONTRACT §10).
  endpointTest: z.strictObject({}),
  endpointTestAnswer: z.object({
    delivered: z.boolean().describe('Whether your endpoint answered 2xx.'),
    statusCode: httpStatus().nullable().describe('Its status; null when no answer came.'),
    durationMs: count(),
    error: z.string().nullable().describe('Why it was not delivered: the error, a refused target, or the start of a non-2xx answer.'),
  }),
};
