import type { Principal } from '../auth.ts';
import { type CommandEnvelope, canonicalForm, type JobIdentifier, replayOf } from '../command.ts';
import { emitCommandOutcome } from '../command-events.ts';
import { conflict, DomainError, notFound } from '../errors.ts';
import type { Job } from '../job.ts';
import { emitOrderStatus } from '../order-events.ts';
import { partnerConfigOf } from '../partner-scope.ts';
import { renderOrderStatus } from '../payloads.ts';
import type { Deps } from '../ports.ts';
import { payloadFormatOf, type Receiver } from '../receivers.ts';

export type PartnerCommandDeps = Pick<
  Deps,
  'accounts' | 'webhookConfigs' | 'jobs' | 'events' | 'commands' | 'ids' | 'clock'
>;

export interface PartnerCommandAnswer {
  _cid: string;
  _type: string;
  status: 'succeeded';
  order: Record<string, unknown>;
}

/**
 * The shared story of SetJobAppointment and SetJobYourOrderId, in one unit of work: take the `_cid` (or answer
 * its replay), find the job (locked until the change commits), check that the caller is its partner or that
 * partner's master, change it, emit its events and the CommandResultEvent, store the answer and the result. Any
 * failure rolls everything back, the `_cid` included, so the caller may resend.
 */
export async function runPartnerCommand(
  deps: PartnerCommandDeps,
  principal: Principal,
  command: CommandEnvelope & { identifier: JobIdentifier },
  change: (job: Job, now: Date) => void,
): Promise<PartnerCommandAnswer> {
  const now = deps.clock.now();
  const received = canonicalForm(command);
  const held = await deps.commands.claim(
    { accountId: principal.accountId, cid: command._cid, type: command._type, body: received },
    now,
  );
  if (held) return replayOf<PartnerCommandAnswer>(held, command._type, received);

  const family = await deps.accounts.partnerFamily(principal.accountId);
  const job = await ownedJob(deps, [principal.accountId, ...(family?.childIds ?? [])], command.identifier);
  change(job, deps.clock.now()); // read after the lock: updatedAt follows the order in which changes commit
  await deps.jobs.save(job);
  await emitOrderStatus(deps, job);

  const sender: Receiver = { accountId: principal.accountId, scope: 'partner', endpoint: partnerConfigOf(family) };
  const answer: PartnerCommandAnswer = {
    _cid: command._cid,
    _type: command._type,
    status: 'succeeded',
    order: renderOrderStatus(job, payloadFormatOf(sender), deps.ids.newId()),
  };
  const result = await emitCommandOutcome(deps, sender, command, {
    status: 'succeeded',
    result: { orderId: job.apiId },
  });
  await deps.commands.finish(principal.accountId, command._cid, { status: 'succeeded', result, answer }, now);
  return answer;
}

/**
 * The one job the identifier names that the caller owns: assigned to the caller, or to one of its children (the
 * caller is then that partner's master). None named at all: 404; named but not the caller's: 403; several: 409.
 */
async function ownedJob(
  deps: Pick<Deps, 'jobs'>,
  ownPartnerIds: readonly string[],
  identifier: JobIdentifier,
): Promise<Job> {
  const owned = await deps.jobs.findByIdentifier(identifier, ownPartnerIds, 2);
  if (owned.length === 1) return owned[0]!;
  if (owned.length > 1) throw conflict(`Several of your jobs match ${identifier.kind}; name the job by jobApiId.`);
  if (await deps.jobs.identifies(identifier)) {
    throw new DomainError('FORBIDDEN', 'The job is not assigned to your account or to one of its child accounts.');
  }
  throw notFound('The job');
}
