/**
 * Which trace the work under way continues (CONTRACT §13): a W3C `traceparent`, opaque to the core, or null when
 * nothing traces. Read as a command or an event is written, so that what they cause later joins the same trace.
 */
export type CurrentTrace = () => string | null;

export const untraced: CurrentTrace = () => null;
