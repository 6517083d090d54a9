type Warn = (fields: Record<string, unknown>, message: string) => void;

const LINE_EVERY_MS = 60_000;
const HELD_AT_MOST = 20;
const MESSAGES = {
  export: 'traces could not be exported',
  sdk: "OpenTelemetry's SDK reports a problem",
} as const;

/**
 * What OpenTelemetry's SDK says went wrong: an export that failed (its error handler), or anything it warns of (its
 * diagnostic log: spans dropped from a full queue, a setting it ignores, a collector's partial refusal). A collector
 * that is down fails every export, several a second: each kind gets a line a minute at most, with the count held back
 * since. What comes before the process's log exists (the exporter reads its settings as it is built) waits for it.
 */
export function sdkProblems() {
  let warn: Warn | undefined;
  const held: [keyof typeof MESSAGES, string][] = [];
  const last = new Map<keyof typeof MESSAGES, { at: number; heldBack: number }>();
  const report = (kind: keyof typeof MESSAGES, problem: string) => {
    if (!warn) {
      if (held.length < HELD_AT_MOST) held.push([kind, problem]);
      return;
    }
    const now = performance.now();
    const line = last.get(kind);
    if (line && now - line.at < LINE_EVERY_MS) {
      line.heldBack += 1;
      return;
    }
    warn({ problem, ...(line?.heldBack && { heldBack: line.heldBack }) }, MESSAGES[kind]);
    last.set(kind, { at: now, heldBack: 0 });
  };
  return {
    exportFailed: (error: unknown) => report('export', error instanceof Error ? error.message : String(error)),
    /** The diagnostic log's arguments, as one text. */
    warned: (...args: unknown[]) => report('sdk', args.map(asText).join(' ')),
    sendTo(to: Warn) {
      warn = to;
      for (const [kind, problem] of held.splice(0)) report(kind, problem);
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
