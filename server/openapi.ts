import { generateOpenApiDocument, type OpenApiRouter } from 'trpc-to-openapi';

/** The REST face of the router, as served at /openapi.json and rendered at /docs. */
export function buildOpenApiDocument(router: OpenApiRouter) {
  return generateOpenApiDocument(router, {
    title: 'Partner and Brand Integration API',
    version: '3.1.0',
    baseUrl: '/',
    description: 'Brands send commands about their orders; installation partners poll, schedule and tag the jobs assigned '
      + 'to them. Every change is delivered as a signed webhook event. Errors are RFC 9457 `application/problem+json`.',
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
  });
}
