import type { Principal } from '../auth.ts';
import type { CommandEnvelope, JobIdentifier } from '../command.ts';
import { checkAppointmentWindow } from '../job.ts';
import { type PartnerCommandDeps, runPartnerCommand } from './run-partner-command.ts';

export interface SetJobAppointmentCommand extends CommandEnvelope {
  _type: 'SetJobAppointment';
  identifier: JobIdentifier;
  appointmentStart: Date;
  appointmentEnd: Date | null;
}

/** `appointment_confirmed`, with `inputs.appointment_date` = { start, end }; accepted in every status (CONTRACT §2). */
export async function setJobAppointment(
  deps: PartnerCommandDeps,
  principal: Principal,
  command: SetJobAppointmentCommand,
) {
  // A rule of the body: judged with it, before the _cid and the job are looked at (CONTRACT §5's order of checks).
  checkAppointmentWindow(command.appointmentStart, command.appointmentEnd);
  return runPartnerCommand(deps, principal, command, (job, now) =>
    job.setAppointment(command.appointmentStart, command.appointmentEnd, now),
  );
}
