// What the suites of a cluster under one start share (cluster.test.ts, cluster-failures.test.ts): the admin token their
// starts set, and SQL on the PostgreSQL server of DATABASE_URL, where each suite makes a database of its own.
import pg from 'pg';

export const ADMIN = 'cluster-admin-token-0123456789';
const server = process.env.DATABASE_URL;
/** The URL of `database` on the server of DATABASE_URL. */
export const urlOf = (database: string) => {
  const url = new URL(server!);
  url.pathname = `/${database}`;
  return url.toString();
};

export async function sql<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

export const adminUrl = () => urlOf('postgres');
