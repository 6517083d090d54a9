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
  constructor(private readonly em: EntityManager, private readonly notifyServer: boolean) {}

  async created(kind: WorkKind): Promise<void> {
    if (this.kinds.has(kind)) return;
    this.kinds.add(kind);
    if (this.notifyServer) await this.em.execute('select pg_notify(?, ?)', [WORK_CHANNEL, kind]);
  }
}
