import type { Principal } from '../auth.ts';
import { invalid, notFound } from '../errors.ts';
import { resolvePollingScope } from '../partner-scope.ts';
import { POLLED_EID, renderOrderStatus } from '../payloads.ts';
import type { Deps } from '../ports.ts';
import { defaultFormatFor, PAYLOAD_VERSIONS, type PayloadVersion } from '../webhook-config.ts';

/**
 * GET /v3/poll/job/{version}/{orderId}: the current OrderStatusEvent of one order. A brand sees its own
 * orders, a partner its visible scope; anything else is 404, so that existence is not revealed.
 */
export async function pollOrder(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'jobs'>,
  principal: Principal,
  input: { version: string; orderId: string },
) {
  if (input.version !== '*' && !(PAYLOAD_VERSIONS as readonly string[]).includes(input.version)) {
    throw invalid('version', `version must be "*" or one of ${PAYLOAD_VERSIONS.join(', ')}.`);
  }
  let format = defaultFormatFor(principal.role);
  let visible: (partnerId: string | null, brandId: string) => boolean;
  if (principal.role === 'partner') {
    const { config, partnerIds } = await resolvePollingScope(deps, principal);
    format = config.payloadFormat();
    visible = (partnerId) => partnerId !== null && partnerIds.includes(partnerId);
  } else {
    const config = await deps.webhookConfigs.find(principal.accountId, 'brand');
    if (config) format = config.payloadFormat();
    visible = (_partnerId, brandId) => brandId === principal.accountId;
  }
  const job = await deps.jobs.get(input.orderId);
  if (!job || !visible(job.partnerId, job.brandAccountId)) throw notFound('The order');
  const version = input.version === '*' ? format.version : (input.version as PayloadVersion);
  return renderOrderStatus(job, { transformer: format.transformer, version }, POLLED_EID);
}
