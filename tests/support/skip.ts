// A test that cannot run on this pass (it needs the other database) returns at once, and uvu counts it as passed.
// It says so here first: the runner (tests/run.ts) reads these records, counts such tests as skipped, not passed,
// and names the reasons.

const RECORDS = Symbol.for('partner-api.tests.skips');
type Records = { [RECORDS]?: string[] };

/** True on the PostgreSQL pass (DATABASE_URL set); false on the embedded database. */
export const onPostgres = Boolean(process.env.DATABASE_URL);

/**
 * Unless `condition` holds, records one skip with its reason and answers true: the test must return now. Only as
 * the first statement of a test body, `if (skipUnless(onPostgres, 'needs PostgreSQL')) return;` (each record takes
 * one test off the passed ones; in a hook it would take off a test that ran).
 */
export function skipUnless(condition: boolean, reason: string): boolean {
  if (condition) return false;
  ((globalThis as Records)[RECORDS] ??= []).push(reason);
  return true;
}

/** The same, for a test that must not run when `condition` holds. */
export const skipWhen = (condition: boolean, reason: string): boolean => skipUnless(!condition, reason);

/** The reason of every skip recorded in this process, one per skipped test. */
export const recordedSkips = (): readonly string[] => (globalThis as Records)[RECORDS] ?? [];
