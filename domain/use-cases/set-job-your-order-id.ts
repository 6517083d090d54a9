import type { Principal } from '../auth.ts';
import type { CommandEnvelope, JobIdentifier } from '../command.ts';
import { type PartnerCommandDeps, runPartnerCommand } from './run-partner-command.ts';

export interface SetJobYourOrderIdCommand extends CommandEnvelope {
  _type: 'SetJobYourOrderId';
  identifier: Exclude<JobIdentifier, { kind: 'yourOrderID' }>;
  yourOrderID: string;
}

/** Writes the partner's own order id (a lookup key from then on); the status stays as it is. */
export function setJobYourOrderId(deps: PartnerCommandDeps, principal: Principal, command: SetJobYourOrderIdCommand) {
  return runPartnerCommand(deps, principal, command, (job, now) => job.setExtPartnerId(command.yourOrderID, now));
}
