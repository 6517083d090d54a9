import type { DeliveryRoundPorts } from './delivery-round-types.ts';

/**
 * The round's ports with reports that cannot throw. A report runs in a send's, a record's or a give-back's handler,
 * where a throw (a logger's own failure) would be an unhandled rejection, which ends the process; a report that throws
 * is dropped (the logger is what would tell of it), and the round goes on. What it concerned is unchanged: a failed
 * send or record is sent again after its lease; an attempt or a notice is only missing from the log and the metrics.
 */
export function withSafeReports(ports: DeliveryRoundPorts): DeliveryRoundPorts {
  const safely =
    <A extends unknown[]>(report: (...args: A) => void) =>
    (...args: A) => {
      try {
        report(...args);
      } catch {
        /* dropped: see above */
      }
    };
  return {
    ...ports,
    attempted: safely(ports.attempted),
    noticed: safely(ports.noticed),
    stepFailed: safely(ports.stepFailed),
  };
}
