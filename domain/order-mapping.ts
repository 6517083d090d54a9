import { isEmail } from './contact.ts';
import { DomainError, type Issue } from './errors.ts';
import {
  CUSTOMER_BILLING_KEYS,
  CUSTOMER_KEYS,
  type Customer,
  type CustomerBilling,
  type OrderDocument,
  type Product,
  SHIPPING_ADDRESS_KEYS,
  type ShippingAddress,
} from './job.ts';

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
      if (!isMappingTarget(field.target))
        issues.push({ path: `fields.${i}.target`, message: `"${field.target}" is not an order field.` });
      if (targets.has(field.target))
        issues.push({ path: `fields.${i}.target`, message: `Target "${field.target}" appears twice.` });
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
      'externalId',
      'invoicingExternalId',
      'orderType',
      'projectId',
      'projectName',
    ].join('|') +
    ')$',
);

const isMappingTarget = (target: string) => TARGET.test(target);

/** The fields of a new order that a mapping can fill (CONTRACT §5). */
export interface MappedOrder {
  customer: Customer | null;
  customerBilling: CustomerBilling | null;
  shippingAddress: ShippingAddress | null;
  products: Product[];
  documents: OrderDocument[];
  eid: string | null;
  invoicingEid: string | null;
  orderType: string | null;
  projectId: string | null;
  projectName: string | null;
}

const SCALARS = {
  externalId: 'eid',
  invoicingExternalId: 'invoicingEid',
  orderType: 'orderType',
  projectId: 'projectId',
  projectName: 'projectName',
} as const;
const OBJECTS = {
  customer: CUSTOMER_KEYS,
  customerBilling: CUSTOMER_BILLING_KEYS,
  shippingAddress: SHIPPING_ADDRESS_KEYS,
} as const;
const empty = (keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, null])) as Record<string, unknown>;

/** Why a value cannot fill a target, or null when it can. */
function valueProblem(target: string, value: string): string | null {
  if (value.trim() === '') return 'must not be empty';
  if (target.endsWith('.quantity')) return /^\d{1,6}$/.test(value) ? null : 'must be a whole number from 0 to 999999';
  if (target === 'customer.email') return isEmail(value) ? null : 'must be an e-mail address';
  if (target.endsWith('.countryCode'))
    return /^[A-Z]{2}$/.test(value) ? null : 'must be a two-letter country code in capitals (ISO 3166-1)';
  const max = target.endsWith('.url') ? 2000 : 200;
  return value.length <= max ? null : `must be at most ${max} characters`;
}

/**
 * One order from a brand's key/value items, through its mapping: every item's key must be mapped, every required
 * key present, every value fit its target. Lists take their entries in index order; an entry no item fills is left
 * out. Every problem is reported, each under the brand's own key; none means the order is complete.
 */
export function mapOrder(
  mapping: OrderMapping,
  items: readonly { key: string; value: string }[],
): { order: MappedOrder; problems: [] } | { order: null; problems: { key: string; message: string }[] } {
  const problems: { key: string; message: string }[] = [];
  const byKey = new Map(mapping.fields.map((f) => [f.key, f]));
  const seen = new Set<string>();
  const values = new Map<string, string>();
  for (const { key, value } of items) {
    const field = byKey.get(key);
    if (!field) problems.push({ key, message: 'is not a key of your order mapping' });
    else if (seen.has(key)) problems.push({ key, message: 'is given more than once' });
    else {
      const problem = valueProblem(field.target, value);
      if (problem) problems.push({ key, message: problem });
      else values.set(field.target, value);
    }
    seen.add(key);
  }
  for (const field of mapping.fields)
    if (field.required && !seen.has(field.key)) problems.push({ key: field.key, message: 'is required' });
  if (problems.length) return { order: null, problems };

  const order: MappedOrder = {
    customer: null,
    customerBilling: null,
    shippingAddress: null,
    products: [],
    documents: [],
    eid: null,
    invoicingEid: null,
    orderType: null,
    projectId: null,
    projectName: null,
  };
  const products = new Map<number, Record<string, unknown>>();
  const documents = new Map<number, { type: string | null; files: Map<number, Record<string, unknown>> }>();
  for (const [target, value] of values) {
    const path = /^(\w+)(?:\[(\d+)\])?(?:\.(\w+)(?:\[(\d+)\])?(?:\.(\w+))?)?$/.exec(target)!;
    const [, head, index, member, subIndex, subMember] = path;
    if (head! in SCALARS) order[SCALARS[head as keyof typeof SCALARS]] = value;
    else if (head! in OBJECTS) {
      const name = head as keyof typeof OBJECTS;
      const object = (order[name] ?? empty(OBJECTS[name])) as Record<string, unknown>;
      object[member!] = value;
      (order as unknown as Record<string, unknown>)[name] = object;
    } else if (head === 'products') {
      const product = products.get(Number(index)) ?? { sku: null, name: null, quantity: null };
      product[member!] = member === 'quantity' ? Number(value) : value;
      products.set(Number(index), product);
    } else {
      const document = documents.get(Number(index)) ?? { type: null, files: new Map() };
      if (member === 'type') document.type = value;
      else {
        const file = document.files.get(Number(subIndex)) ?? { name: null, url: null };
        file[subMember!] = value;
        document.files.set(Number(subIndex), file);
      }
      documents.set(Number(index), document);
    }
  }
  const inOrder = <T>(entries: Map<number, T>) => [...entries].sort(([a], [b]) => a - b).map(([, v]) => v);
  order.products = inOrder(products) as unknown as Product[];
  order.documents = inOrder(documents).map((d) => ({
    type: d.type,
    files: inOrder(d.files) as unknown as OrderDocument['files'],
  }));
  return { order, problems: [] };
}
