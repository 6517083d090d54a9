type Warn = (fields: Record<string, unknown>, message: string) => void;

const LINE_EVERY_MS = 60_000;
const HELD_AT_MOST = 20;
const MESSAGES = {
  export: 'traces could not be exported',
  sdk: "OpenTelemetry's SDK reports a problem",
} as const;
type Kind = keyof typeof MESSAGES;

/**
 * What OpenTelemetry's SDK says went wrong: an export that failed (its error handler), or anything it warns of (its
 * diagnostic log: spans dropped from a full queue, a setting it ignores, a collector's partial refusal). A collector
 * that is down fails every export, several a second: the same problem (its text, numbers aside) gets a line a minute at
 * most, with the count held back since. What comes before the process's log exists (the exporter reads its settings
 * as it is built) waits for it, and is written whole when it comes; until then nothing is written.
 */
export function sdkProblems(now: () => number = () => performance.now()) {
  let warn: Warn | undefined;
  const held: [Kind, string][] = [];
  let overflow = 0;
  const last = new Map<string, { at: number; heldBack: number }>();
  const write = (kind: Kind, problem: string, heldBack = 0) =>
    warn?.({ problem, ...(heldBack > 0 && { heldBack }) }, MESSAGES[kind]);
  const report = (kind: Kind, problem: string) => {
    if (!warn) {
      if (held.length < HELD_AT_MOST) held.push([kind, problem]);
      else overflow += 1;
      return;
    }
    const key = `${kind} ${problem.replace(/\d+/g, '#')}`;
    const line = last.get(key);
    if (line && now() - line.at < LINE_EVERY_MS) {
      line.heldBack += 1;
      return;
    }
    write(kind, problem, line?.heldBack);
    last.set(key, { at: now(), heldBack: 0 });
  };
  return {
    exportFailed: (error: unknown) => report('export', asText(error)),
    /** The diagnostic log's arguments, as one text. */
    warned: (...args: unknown[]) => report('sdk', args.map(asText).join(' ')),
    sendTo(to: Warn) {
      warn = to;
      for (const [kind, problem] of held.splice(0)) write(kind, problem);
      if (overflow > 0) write('sdk', 'more problems before the log began than were kept', overflow);
      overflow = 0;
    },
  };
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value); // circular
  }
}
