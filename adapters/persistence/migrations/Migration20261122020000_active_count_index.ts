import { Migration } from '@mikro-orm/migrations';

/**
 * `total` of `active=true` listings: a deduplicated (partner_id) index over the active rows only, so that the
 * count is an index-only scan of a few MB instead of one over the wide listing index (docs/BENCHMARKS.md).
 */
export class Migration20261122020000_active_count_index extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index jobs_partner_active_idx on jobs (partner_id)
      where status not in ('new', 'cancelled', 'closed', 'completed', 'invoice sent');`);
  }
}
