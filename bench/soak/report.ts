// What the soak reports: the completeness of the webhooks, and the pieces of its sections of docs/BENCHMARKS.md.
import { percentile, writeSection } from '../report.ts';
import { env, NO_WRITE } from './config.ts';
import type { KindStats, Stats } from './load.ts';
import { growth, type Sampled, watched } from './processes.ts';
import { KINDS, type Kind } from './tenants.ts';

export interface StoredEvent {
  id: string;
  account: string;
  status: string | null;
  attempts: number | null;
}
export const STORED_SQL = `select e.id::text as id, e.account_id::text as account, d.status, d.attempts
  from events e left join deliveries d on d.event_id = e.id`;

export interface Completeness {
  stored: number;
  received: number;
  lost: number;
  duplicates: number;
  unexpected: number;
  withoutDelivery: number;
  lostSamples: string[];
}
export function completeness(
  stored: StoredEvent[],
  accounts: Set<string>,
  received: { count: number; arrivals: Record<string, number> },
): Completeness {
  const ours = stored.filter((e) => accounts.has(e.account));
  const arrived = new Set(Object.keys(received.arrivals));
  const lost = ours.filter((e) => !arrived.has(e.id));
  const ids = new Set(ours.map((e) => e.id));
  return {
    stored: ours.length,
    received: arrived.size,
    lost: lost.length,
    duplicates: received.count - arrived.size,
    unexpected: [...arrived].filter((id) => !ids.has(id)).length,
    withoutDelivery: ours.filter((e) => e.status === null).length,
    lostSamples: lost.slice(0, 5).map((e) => `${e.id} (delivery ${e.status ?? 'none'}, ${e.attempts ?? 0} attempts)`),
  };
}

export const ms = (x: number) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : '–');
export const mb = (x: number) => x.toFixed(0);
export const pct = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
export const met = (ok: boolean) => (ok ? 'met' : '**not met**');
export const p = (xs: number[], q: number) => (xs.length ? percentile(xs, q) : NaN);
const statusList = (s: KindStats) =>
  [...s.statuses]
    .sort(([a], [b]) => a - b)
    .map(([code, n]) => `${code}: ${n}`)
    .join(', ') + (s.connectionErrors ? `, connection errors: ${s.connectionErrors}` : '');
export function endpointTable(stats: Stats) {
  const rows = (Object.keys(KINDS) as Kind[])
    .filter((k) => stats.kinds.has(k))
    .map((k) => {
      const s = stats.of(k);
      return `| ${KINDS[k]} | ${s.latencies.length + s.connectionErrors} | ${statusList(s)} | ${s.errors} | ${ms(p(s.latencies, 0.5))} | ${ms(p(s.latencies, 0.99))} |`;
    });
  const all = stats.latencies;
  return `| endpoint | requests | statuses | errors | p50 ms | p99 ms |
|---|---:|---|---:|---:|---:|
${rows.join('\n')}
| **all** | ${stats.sent} | | **${stats.errors}** | ${ms(p(all, 0.5))} | ${ms(p(all, 0.99))} |`;
}
export function memoryTable(rows: Sampled[], seconds: number) {
  return `| process | RSS start MB | RSS end MB | RSS max MB | growth | CPU over the load |
|---|---:|---:|---:|---:|---:|
${rows.map((r) => `| ${r.name} | ${mb(r.startRss)} | ${mb(r.endRss)} | ${mb(r.maxRss)} | ${pct(growth(r))} | ${((100 * (r.cpu1 - r.cpu0)) / seconds).toFixed(0)} % of a core |`).join('\n')}`;
}
/**
 * What the 429s of the mixed load were. Each account stays well within its requests a second, so the only 429 that is
 * right is a third legacy listing of an account while two of its own still stream (their answers had slowed down).
 */
export function tooMany(stats: Stats) {
  const all = stats.status(429);
  if (!all) return '';
  return (
    `429s: ${stats.rightly429} to a legacy listing while 2 other listings of the account were under way (the limit of 2 at ` +
    `work: not errors); ${all - stats.rightly429} others (errors above).\n`
  );
}
export const settingsLine = () =>
  Object.entries(env)
    .filter(([k]) => k.startsWith('SOAK_') && k !== 'SOAK_NO_WRITE')
    .map(([k, v]) => `${k}=${v} `)
    .join('');
export const logLine = () =>
  watched
    .filter((w) => w.name !== 'receiver')
    .map(
      (w) =>
        `${w.name} ${w.errorLines}${w.samples.length ? ` (first: \`${w.samples[0]!.slice(0, 300).replace(/`/g, "'")}\`)` : ''}`,
    )
    .join(', ');
export async function publish(title: string, body: string) {
  if (NO_WRITE) {
    console.log(`\n## ${title}\n\n${body.trim()}\n`);
    return;
  }
  await writeSection(title, body);
  console.log(`written to docs/BENCHMARKS.md: ${title}`);
}
