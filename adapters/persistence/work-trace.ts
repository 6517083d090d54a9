/**
 * The trace context of the work a unit runs now (a W3C `traceparent`, CONTRACT §13), read as a command or an event is
 * written: a request's for its whole unit; in a worker's lane, that of the command running at that moment (a batch
 * runs several in one unit). Handed on by hand: adapters/tracing.ts says why there is no context manager.
 */
export type WorkTrace = () => string | null;

export const untraced: WorkTrace = () => null;
