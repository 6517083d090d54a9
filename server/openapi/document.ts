import { generateOpenApiDocument, type OpenAPIObject, type OpenApiRouter } from 'trpc-to-openapi';
import { type ZodType, z } from 'zod';
import { problemCodes } from '../errors.ts';
import type { RouteTable } from '../routers/contracts.ts';
import type { Meta, ProblemStatus } from '../trpc.ts';
import { OPERATION_EXAMPLES } from './examples.ts';
import { payloadShapes } from './payload-docs.ts';

// The document is JSON built in steps, each checked by the OpenAPI validator.
// biome-ignore lint/suspicious/noExplicitAny: see above
type Json = Record<string, any>;

const STATUS_TEXT: Record<ProblemStatus, string> = {
  400: 'The body or a parameter is not valid (`issues` lists each problem), or the body is not well-formed JSON (`PARSE_ERROR`).',
  401: 'The bearer token is missing, invalid, expired, of the wrong kind, or of a role this operation does not serve.',
  403: 'The caller may not do this (see the operation).',
  404: 'Not found (see the operation).',
  409: 'A conflict (see the operation).',
  410: 'Gone: the cursor is older than the retention window; start again without it.',
  413: 'The body is larger than 1 MiB.',
  415: 'The body is not JSON (`content-type: application/json`, UTF-8).',
  429: 'Too many requests; `Retry-After` says how many seconds to wait.',
  500: 'An unexpected error; the answer carries no detail of it, quote `requestId` when reporting it.',
  503: 'The service cannot reach its database right now (`SERVICE_UNAVAILABLE`); send the same request again after `Retry-After` seconds (a command resent with its `_cid` never runs twice).',
};

const problemSchema = {
  type: 'object',
  description: 'RFC 9457 problem details; `code` is the stable machine-readable member.',
  properties: {
    type: { type: 'string', description: 'Always `about:blank`: `code` tells the kind.' },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status of the answer.' },
    detail: { type: 'string', description: 'What went wrong, for people.' },
    code: { enum: problemCodes },
    message: {
      type: 'string',
      description: 'A short summary (`Input validation failed` when `issues` are given); `detail` says more.',
    },
    requestId: { type: 'string', description: 'Also in the `x-request-id` header; quote it when reporting a problem.' },
    issues: {
      type: 'array',
      description: 'On 400 BAD_REQUEST: every problem found in the input.',
      items: {
        type: 'object',
        properties: {
          path: {
            type: 'string',
            description: 'Dotted path of the field, e.g. `customer.email`; empty for the whole input.',
          },
          message: { type: 'string' },
        },
        required: ['path', 'message'],
        additionalProperties: false,
      },
    },
  },
  required: ['type', 'title', 'status', 'detail', 'code', 'message', 'requestId'],
  additionalProperties: false,
};

const problemResponse = (status: ProblemStatus) => ({
  description: STATUS_TEXT[status],
  ...((status === 429 || status === 503) && {
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer', minimum: 1 } } },
  }),
  ...(status === 401 && {
    headers: {
      'WWW-Authenticate': {
        description:
          '`Bearer` (RFC 6750), with `error="invalid_token"` when the token sent was refused (not when it was accepted and a signature or its role was not).',
        schema: { type: 'string' },
      },
    },
  }),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

const idOf = (schema: ZodType) => {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error('a documented body schema needs a meta id');
  return id;
};

/** The routes of REST operations, with their meta and input. */
function restRoutes(routes: RouteTable) {
  return Object.values(routes).filter(
    (route): route is typeof route & { meta: Meta & { openapi: NonNullable<Meta['openapi']> } } =>
      Boolean(route.meta.openapi),
  );
}

/**
 * The REST face of the router, as served at /openapi.json and rendered at /docs: what trpc-to-openapi derives from
 * the router's schemas, completed with what only the meta of its routes (server/routers/contracts.ts) knows. Each
 * operation lists the statuses it answers (its success, every problem as `application/problem+json`), the bearer it
 * takes, and an example of each body.
 */
export function buildOpenApiDocument(router: OpenApiRouter, routes: RouteTable): OpenAPIObject {
  const bodies = restRoutes(routes).flatMap(({ meta }) => (meta.rest?.body ? [meta.rest.body] : []));
  const document = generateOpenApiDocument(router, {
    defs: Object.fromEntries([...bodies, ...payloadShapes].map((schema) => [idOf(schema), schema])),
    title: 'Partner and Brand Integration API',
    version: '3.1.0',
    baseUrl: '/',
    description:
      'Brands send commands about their orders; installation partners poll, schedule and tag the jobs assigned ' +
      'to them. Every change is delivered as a signed webhook event. Errors are RFC 9457 `application/problem+json`. ' +
      'Log in with `POST /v3/auth/login` (a refresh token arrives by e-mail), exchange it at `POST /v3/auth/access-token`, ' +
      'then send `Authorization: Bearer <access token>`. The examples use the demo data of `SEED_DEMO=1`.',
    securitySchemes: {
      accessToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'An access token from POST /v3/auth/access-token.',
      },
      refreshToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'The refresh token mailed by POST /v3/auth/login (valid 24 h).',
      },
    },
  }) as Json;

  for (const { meta, input } of restRoutes(routes)) {
    const { method, path } = meta.openapi;
    const operation = document.paths[path.replace(/\/$/, '')][method.toLowerCase()];
    const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
    const bearer = meta.roles ? 'accessToken' : meta.rest?.bearer === 'refresh' ? 'refreshToken' : null;
    operation.security = bearer ? [{ [bearer]: [] }] : [];

    for (const parameter of operation.parameters ?? []) {
      parameter.description ??= parameter.schema?.description;
      if (parameter.schema?.examples) parameter.example ??= parameter.schema.examples[0];
    }
    const examples = OPERATION_EXAMPLES[operation.operationId] ?? {};
    const media = operation.requestBody?.content?.['application/json'];
    // A request without a body is read as {} (bodilessIsEmptyJson): where {} is a whole request, the body is optional.
    if (media && input.safeParse({}).success) operation.requestBody.required = false;
    if (media && examples.request !== undefined) media.example = examples.request;
    if (media && examples.requests !== undefined) media.examples = examples.requests;
    if (media && meta.rest?.body) media.schema = { $ref: `#/components/schemas/${idOf(meta.rest.body)}` };
    // Strict inputs behind a refinement lose their closedness in the generator: say it, and the one-of rule, here.
    if (media && meta.rest?.exactlyOneOf) {
      media.schema.additionalProperties = false;
      media.schema.oneOf = meta.rest.exactlyOneOf.map((key) => ({ required: [key] }));
    }

    const success = meta.rest?.status ?? 200;
    const generated = operation.responses['200'];
    const problems = new Set<ProblemStatus>([...(meta.rest?.problems ?? []), 500, 503]);
    if (bearer) problems.add(401);
    if (bearer) problems.add(429);
    if (hasBody) for (const status of [400, 413, 415] as const) problems.add(status);
    const content = {
      ...generated.content['application/json'],
      ...(examples.response !== undefined && { example: examples.response }),
    };
    // A procedure that may answer null (204) has a nullable output schema; the 200 answer itself is never null.
    if (meta.rest?.noContent && Array.isArray(content.schema?.anyOf))
      content.schema = content.schema.anyOf.find((s: Json) => s.type !== 'null');
    operation.responses = {
      [success]: {
        ...generated,
        description: meta.openapi.successDescription ?? generated.description,
        content: { 'application/json': content },
      },
      ...(meta.rest?.noContent && { 204: { description: meta.rest.noContent } }),
      ...Object.fromEntries([...problems].sort().map((status) => [status, problemResponse(status)])),
    };
  }

  const { schemas = {} } = document.components ?? {};
  document.components = {
    ...document.components,
    schemas: {
      ...Object.fromEntries(Object.entries(schemas).filter(([name]) => !name.startsWith('error.'))),
      Problem: problemSchema,
    },
  };
  return document as OpenAPIObject;
}
