import type { EntityManager } from '@mikro-orm/postgresql';
import type { BackgroundWork } from '../../domain/ports.ts';

type WorkKind = BackgroundWork;

/** The channel on which committed work is announced to every process sharing a PostgreSQL server. */
export const WORK_CHANNEL = 'pbi_work';

/**
 * What a unit of work tells the workers about the work it created. On a server, a NOTIFY in the same transaction
 * (PostgreSQL sends it at commit, to every listening process); in this process, the kinds are handed to `committed`
 * once the transaction has committed.
 */
export class WorkNotices {
  readonly kinds = new Set<WorkKind>();
  constructor(private readonly em: EntityManager, readonly notifyServer: boolean) {}

  async created(kind: WorkKind): Promise<void> {
    if (this.kinds.has(kind)) return;
    this.kinds.add(kind);
    if (this.notifyServer) await this.em.execute('select pg_notify(?, ?)', [WORK_CHANNEL, kind]);
  }

  /** For a statement that sent its own NOTIFY (see `announcing`): only this process is left to tell. */
  announced(kind: WorkKind): void {
    this.kinds.add(kind);
  }

  /** SQL for a CTE that NOTIFYs once for each row of `source`, when the server is to be told. */
  announcing(source: string, kind: WorkKind): string {
    return this.notifyServer ? `select pg_notify('${WORK_CHANNEL}', '${kind}') from ${source}` : `select 1 from ${source} where false`;
  }
}
