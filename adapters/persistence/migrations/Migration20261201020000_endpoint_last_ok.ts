import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint's last 2xx, as the record statement (delivery-queue.ts) knew it while it held the endpoint's row: a
 * record that waited for that row reads it fresh with the row, where the attempts logged meanwhile are beyond its
 * snapshot. With it, a failure recorded after a later 2xx (a timeout that began first and ended last) leaves the
 * endpoint healthy even when the two records met at the lock (CONTRACT §11: failing from its first attempt without a
 * 2xx after its last 2xx). Null until a record that holds the row sees a 2xx.
 */
export class Migration20261201020000_endpoint_last_ok extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
set local lock_timeout = '5s';
alter table webhook_configs add column last_ok_at timestamptz;
`);
  }
}
