import type { Principal } from '../auth.ts';
import type { CommandEnvelope, JobIdentifier } from '../command.ts';
import { runPartnerCommand, type PartnerCommandDeps } from './run-partner-command.ts';

export interface SetJobAppointmentCommand extends CommandEnvelope {
  _type: 'SetJobAppointment';
  identifier: JobIdentifier;
  appointmentStart: Date;
  appointmentEnd: Date | null;
}

/** `appointment_confirmed`, with `inputs.appointment_date` = { start, end }; accepted in every status (CONTRACT §2). */
export function setJobAppointment(deps: PartnerCommandDeps, principal: Principal, command: SetJobAppointmentCommand) {
  return runPartnerCommand(deps, principal, command, (job, now) => job.setAppointment(command.appointmentStart, command.appointmentEnd, now));
}
