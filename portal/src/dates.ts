// The portal's one way of writing a moment: ISO 8601's order, in UTC, said to be UTC ("2026-11-29 05:50:12 UTC"),
// whatever the browser's locale, in tables, details and the date fields alike (which take the same text back).

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `2026-11-29 05:50:12 UTC`, or "—" for no moment (and the text as given when it is not a date). */
export function formatUtc(iso: string | Date | null | undefined): string {
  if (!iso) return '—';
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  if (Number.isNaN(d.getTime())) return typeof iso === 'string' ? iso : '—';
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`
  );
}

/** A duration a person reads at a glance: `41 ms`, `2.4 s`, `3 min 05 s`, `2 h 10 min`, `3 d 4 h`. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(abs / 1000);
  const sign = ms < 0 ? '-' : '';
  if (s < 3600) return `${sign}${Math.floor(s / 60)} min ${pad(s % 60)} s`;
  if (s < 86_400) return `${sign}${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
  return `${sign}${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

// "2026-11-29", "2026-11-29 05:50", "2026-11-29 05:50:12 UTC", "2026-11-29T05:50:12.345Z", "2026-11-29T06:50+01:00".
const INPUT = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?)?\s*(UTC|Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * The ISO 8601 instant a date field's text names (read as UTC unless it gives an offset), or null when it names none:
 * a malformed text, or a day or time that does not exist (2026-02-30, 24:10).
 */
export function parseUtcInput(text: string): string | null {
  const m = INPUT.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'UTC'] = m;
  const parts = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = parts;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const utc = new Date(Date.UTC(year, month - 1, day, hour, minute, second, Math.round(Number(frac || 0) * 1000)));
  if (utc.getUTCDate() !== day || utc.getUTCMonth() !== month - 1) return null;
  let offsetMinutes = 0;
  if (!/^(utc|z)$/i.test(zone)) {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    if (Number(z[2]) > 23 || Number(z[3]) > 59) return null;
    offsetMinutes = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
  }
  return new Date(utc.getTime() - offsetMinutes * 60_000).toISOString();
}

/** A moment to the whole minute, as a date field's starting text (`2026-11-29 05:50:00 UTC`). */
export const utcInputText = (at: Date): string => formatUtc(new Date(Math.floor(at.getTime() / 60_000) * 60_000));
