import type { BackgroundWork } from '../../../domain/ports.ts';

/** The channel on which committed work is announced to every process sharing a PostgreSQL server. */
export const WORK_CHANNEL = 'pbi_work';

/**
 * What a unit of work created for the workers, collected while it runs and handed to its `committed` hook once it
 * has committed (see announcer.ts for why not a NOTIFY inside the transaction).
 */
export class WorkNotices {
  readonly kinds = new Set<BackgroundWork>();

  created(kind: BackgroundWork): void {
    this.kinds.add(kind);
  }
}
