import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { BackgroundWork } from '../../../domain/ports.ts';
import { unavailableOr } from '../unavailable.ts';
import { WORK_CHANNEL } from './notices.ts';

type State = 'idle' | 'sending' | 'again';

/**
 * Tells every process sharing the server about committed work: a NOTIFY on the work channel, sent after the commit
 * (see `notifyWork`), never inside the transaction that made the work. PostgreSQL serializes the commits of all
 * NOTIFYing transactions behind one lock held through their WAL flush, so every accepted command waited for the
 * previous one's fsync (a sample of pg_stat_activity under bench:commands showed most of the service's waits there).
 *
 * Announcements of one kind are coalesced: while one is under way, any number of commits lead to exactly one more,
 * sent after it, so a listener always hears of a commit after it is visible. A lost announcement (the server away,
 * this process killed after a commit) costs a worker its idle delay, never the work: workers also look on their own.
 *
 * `spacingMs` holds the kind's next announcement back until that long after the last one ended. Without it, a
 * NOTIFY takes a round trip of about a millisecond, so a process accepting commands steadily sent one for nearly every
 * command, and each woke the executor for a claim of its own; with it, one per `spacingMs` at most, the first of an
 * idle spell at once.
 */
export function workAnnouncer(
  send: (kind: BackgroundWork) => Promise<void>,
  onError: (error: unknown) => void,
  { spacingMs = 0 } = {},
) {
  const states = new Map<BackgroundWork, State>();
  const under = new Set<Promise<void>>();
  let closing = false;

  const start = (kind: BackgroundWork) => {
    states.set(kind, 'sending');
    const sent = send(kind)
      .catch((error: unknown) => {
        try {
          onError(error);
        } catch {
          /* reporting must not stop the announcements */
        }
      })
      .then(() =>
        spacingMs > 0 && !closing ? new Promise<void>((resolve) => setTimeout(resolve, spacingMs)) : undefined,
      )
      .finally(() => {
        under.delete(sent);
        if (states.get(kind) === 'again' && !closing) start(kind);
        else states.set(kind, 'idle');
      });
    under.add(sent);
  };
  const settled = async () => {
    while (under.size > 0) await Promise.all(under);
  };

  return {
    announce(kinds: ReadonlySet<BackgroundWork>): void {
      for (const kind of kinds) {
        if ((states.get(kind) ?? 'idle') === 'idle') start(kind);
        else states.set(kind, 'again');
      }
    },
    /** Waits for the announcements under way and those they lead to. */
    settled,
    /**
     * At shutdown: waits for the announcements under way, and sends no follow-up. While the server is away each send
     * waits for the pool up to its timeout; a follow-up would double that wait for a wake-up the workers' own look
     * replaces.
     */
    async close(): Promise<void> {
      closing = true;
      await settled();
    },
  };
}

/**
 * One NOTIFY in a statement of its own that does not wait for the disk (synchronous_commit off for its own implicit
 * transaction), on a pooled connection of its own: never in a unit of work (nor an EntityManager forked for it).
 */
export const notifyWork =
  (orm: MikroORM) =>
  async (kind: BackgroundWork): Promise<void> => {
    const knex = orm.em.getKnex();
    try {
      const client = (await knex.client.acquireConnection()) as pg.PoolClient;
      try {
        await client.query({
          name: WORK_ANNOUNCEMENT,
          text: "select set_config('synchronous_commit', 'off', true), pg_notify($1, $2)",
          values: [WORK_CHANNEL, kind],
        });
      } finally {
        await knex.client.releaseConnection(client);
      }
    } catch (error) {
      throw unavailableOr(error);
    }
  };

/**
 * The announcement's statement, by name: a request's measured round trips leave it out (it is coalesced across
 * requests).
 */
export const WORK_ANNOUNCEMENT = 'work-announce';
