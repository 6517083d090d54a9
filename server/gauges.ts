// The operator console's summary of the gauges: the same numbers GET /metrics answers (of every process of a cluster),
// read from its text so that the console and a scrape never disagree.

export interface GaugeSample {
  labels: Record<string, string>;
  value: number;
}

export interface Gauge {
  name: string;
  help: string;
  samples: GaugeSample[];
}

/** Node's and the process's own gauges (heap, handles, file descriptors) are left to the dashboard. */
const RUNTIME = /^(nodejs|process)_/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

const unescaped = (value: string) => value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));

/** The service's gauges in Prometheus' text format, in the order the text gives them. */
export function gaugesOf(text: string): Gauge[] {
  const gauges = new Map<string, Gauge>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      if (kind === 'HELP') help.set(name, unescaped(rest));
      else if (rest === 'gauge' && !RUNTIME.test(name)) gauges.set(name, { name, help: '', samples: [] });
      continue;
    }
    const sample = SAMPLE.exec(line);
    const gauge = sample && gauges.get(sample[1]!);
    if (!gauge) continue;
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(LABEL)].map((m) => [m[1]!, unescaped(m[2]!)]));
    gauge.samples.push({ labels, value: Number(sample[3]) });
  }
  return [...gauges.values()].map((g) => ({ ...g, help: help.get(g.name) ?? '' }));
}
