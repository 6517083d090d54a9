import { CUSTOMER_BILLING_KEYS, CUSTOMER_KEYS, SHIPPING_ADDRESS_KEYS } from './job.ts';
import { DomainError, type Issue } from './errors.ts';

export interface MappingField {
  /** The brand's own key, as it appears in CreateOrderFromMapping items. */
  key: string;
  /** Dotted order-field path with explicit list indexes, e.g. `products[0].sku`. */
  target: string;
  required: boolean;
}

export class OrderMapping {
  constructor(
    public brandAccountId: string,
    public fields: MappingField[],
    public updatedAt: Date,
  ) {}

  static create(brandAccountId: string, fields: MappingField[], now: Date): OrderMapping {
    const issues: Issue[] = [];
    const keys = new Set<string>();
    const targets = new Set<string>();
    fields.forEach((field, i) => {
      if (!field.key.trim()) issues.push({ path: `fields.${i}.key`, message: 'A key is required.' });
      if (keys.has(field.key)) issues.push({ path: `fields.${i}.key`, message: `Key "${field.key}" appears twice.` });
      if (!isMappingTarget(field.target)) issues.push({ path: `fields.${i}.target`, message: `"${field.target}" is not an order field.` });
      if (targets.has(field.target)) issues.push({ path: `fields.${i}.target`, message: `Target "${field.target}" appears twice.` });
      keys.add(field.key);
      targets.add(field.target);
    });
    if (fields.length === 0) issues.push({ path: 'fields', message: 'At least one field is required.' });
    if (issues.length) throw new DomainError('VALIDATION_FAILED', 'The mapping is not valid.', issues);
    return new OrderMapping(brandAccountId, fields, now);
  }
}

const alternatives = (keys: readonly string[]) => keys.join('|');
const INDEX = String.raw`\[(?:0|[1-9]\d{0,2})\]`;
const TARGET = new RegExp(
  '^(?:' +
    [
      `customer\\.(?:${alternatives(CUSTOMER_KEYS)})`,
      `customerBilling\\.(?:${alternatives(CUSTOMER_BILLING_KEYS)})`,
      `shippingAddress\\.(?:${alternatives(SHIPPING_ADDRESS_KEYS)})`,
      `products${INDEX}\\.(?:sku|name|quantity)`,
      `documents${INDEX}\\.type`,
      `documents${INDEX}\\.files${INDEX}\\.(?:name|url)`,
      'externalId', 'invoicingExternalId', 'orderType', 'projectId', 'projectName',
    ].join('|') +
    ')$',
);

export const isMappingTarget = (target: string) => TARGET.test(target);
