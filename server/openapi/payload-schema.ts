// The JSON Schema pieces the payload documentation (server/openapi/payload-docs.ts) is built of: nullable strings and
// times, closed objects, and references to components.
export type Schema = Record<string, unknown>;
export const str: Schema = { type: ['string', 'null'] };
export const time: Schema = { type: ['string', 'null'], format: 'date-time' };
export const closed = (
  properties: Record<string, Schema>,
  required: readonly string[],
  extra: Schema = {},
): Schema => ({ type: 'object', properties, required: [...required], additionalProperties: false, ...extra });
export const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
