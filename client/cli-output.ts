// The admin CLI's answers as a terminal shows them (client/cli.ts): any answer as a table, and the members of a job it
// shows.
import Table from 'cli-table3';

export type Row = Record<string, unknown>;

export const cell = (value: unknown) =>
  value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);

/** One object as a two-column table; a list of objects as a table with a column per member. */
export function render(value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)';
    const columns = [...new Set(value.flatMap((row: Row) => Object.keys(row)))];
    const table = new Table({ head: columns, style: { head: [], border: [] } });
    for (const row of value as Row[]) table.push(columns.map((c) => cell(row[c])));
    return table.toString();
  }
  const table = new Table({ style: { head: [], border: [] } });
  for (const [key, item] of Object.entries(value as Row)) table.push({ [key]: cell(item) });
  return table.toString();
}

export const pickJob = (job: Row) => ({
  apiId: job.apiId,
  name: job.name,
  status: job.status,
  brandAccountId: job.brandAccountId,
  partnerId: job.partnerId,
  updatedAt: job.updatedAt,
});
