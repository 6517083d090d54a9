import type { Principal } from '../auth.ts';
import { sameJson, type CommandEnvelope, type JobIdentifier } from '../command.ts';
import { conflict, DomainError, notFound } from '../errors.ts';
import type { Job } from '../job.ts';
import { emitOrderStatus } from '../order-events.ts';
import { partnerConfigOf } from '../partner-scope.ts';
import { renderOrderStatus } from '../payloads.ts';
import type { Deps } from '../ports.ts';
import { defaultFormatFor } from '../webhook-config.ts';

export type PartnerCommandDeps = Pick<Deps, 'accounts' | 'webhookConfigs' | 'jobs' | 'events' | 'commands' | 'ids' | 'clock'>;

export interface PartnerCommandAnswer {
  _cid: string;
  _type: string;
  status: 'succeeded';
  order: Record<string, unknown>;
}

/**
 * The shared story of SetJobAppointment and SetJobYourOrderId, in one unit of work: take the `_cid` (or answer
 * its replay), find the job, check that the caller is its partner or that partner's master, change it, emit its
 * events, store the answer. Any failure rolls everything back, the `_cid` included, so the caller may resend.
 */
export async function runPartnerCommand(
  deps: PartnerCommandDeps,
  principal: Principal,
  command: CommandEnvelope & { identifier: JobIdentifier },
  body: unknown,
  change: (job: Job, now: Date) => void,
): Promise<PartnerCommandAnswer> {
  const now = deps.clock.now();
  const held = await deps.commands.claim({ accountId: principal.accountId, cid: command._cid, type: command._type, body }, now);
  if (held) {
    if (held.type !== command._type || !sameJson(held.body, body)) throw conflict('This _cid was used before with another body.');
    return held.answer as PartnerCommandAnswer;
  }

  const job = await ownedJob(deps, principal, command.identifier);
  change(job, now);
  await deps.jobs.save(job);
  await emitOrderStatus(deps, job);

  const config = partnerConfigOf(await deps.accounts.partnerFamily(principal.accountId));
  const answer: PartnerCommandAnswer = {
    _cid: command._cid,
    _type: command._type,
    status: 'succeeded',
    order: renderOrderStatus(job, config?.payloadFormat() ?? defaultFormatFor('partner'), deps.ids.newId()),
  };
  await deps.commands.complete(principal.accountId, command._cid, 'succeeded', answer, now);
  return answer;
}

/** The one job the identifier names that the caller owns: as its partner, or as that partner's master. */
async function ownedJob(deps: Pick<Deps, 'jobs' | 'accounts'>, principal: Principal, identifier: JobIdentifier): Promise<Job> {
  const candidates = await deps.jobs.findByIdentifier(identifier);
  if (candidates.length === 0) throw notFound('The job');
  const owned: Job[] = [];
  for (const job of candidates) {
    if (job.partnerId === null) continue;
    if (job.partnerId === principal.accountId) owned.push(job);
    else if ((await deps.accounts.get(job.partnerId))?.parentId === principal.accountId) owned.push(job);
  }
  if (owned.length === 0) throw new DomainError('FORBIDDEN', 'The job is not assigned to your account or to one of its child accounts.');
  if (owned.length > 1) throw conflict(`${owned.length} of your jobs match ${identifier.kind}; use jobApiId.`);
  return owned[0]!;
}
