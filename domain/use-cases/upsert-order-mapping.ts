import { invalid, notFound } from '../errors.ts';
import { type MappingField, OrderMapping } from '../order-mapping.ts';
import type { Deps } from '../ports.ts';

export async function upsertOrderMapping(
  deps: Pick<Deps, 'accounts' | 'orderMappings' | 'clock'>,
  input: { brandAccountId: string; fields: MappingField[] },
): Promise<OrderMapping> {
  const brand = await deps.accounts.get(input.brandAccountId);
  if (!brand) throw notFound('The brand account');
  if (brand.role !== 'brand') throw invalid('brandAccountId', 'The account is not a brand account.');
  const mapping = OrderMapping.create(brand.id, input.fields, deps.clock.now());
  await deps.orderMappings.save(mapping);
  return mapping;
}
