import type { Deps, EndpointEntry, EndpointHealthFilter } from '../ports.ts';

export const ENDPOINT_LIST_LIMIT = { default: 100, max: 500 } as const;

/** admin.webhookConfigs.list: every account's endpoints with their health, the longest failing first. */
export function listEndpoints(
  deps: Pick<Deps, 'operatorSearch'>,
  input: { health?: EndpointHealthFilter; limit?: number },
): Promise<EndpointEntry[]> {
  return deps.operatorSearch.endpoints(input.health ?? 'all', input.limit ?? ENDPOINT_LIST_LIMIT.default);
}
