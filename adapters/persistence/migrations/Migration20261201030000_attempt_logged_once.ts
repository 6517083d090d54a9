import { Migration } from '@mikro-orm/migrations';

/**
 * A try is logged once: the record statement (delivery-queue.ts) inserts each attempt with `on conflict do nothing` on
 * its delivery, day and start. Before, it looked in its snapshot for the try, and a record made again after its answer
 * was lost, while the first was still running on the server, logged it twice and judged it twice. The index takes
 * the place of the one by delivery and id: the log reads a delivery's few attempts by delivery and day, and sorts
 * them. Tries logged twice before this (the record made again) are kept once, the first logged.
 */
export class Migration20261201030000_attempt_logged_once extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
set local lock_timeout = '5s';
lock table delivery_attempts in share row exclusive mode;
delete from delivery_attempts a using delivery_attempts b
  where b.delivery_id = a.delivery_id and b.created_at = a.created_at and b.at = a.at and b.id < a.id;
create unique index delivery_attempts_try_key on delivery_attempts (delivery_id, created_at, at);
drop index delivery_attempts_delivery_idx;
`);
  }
}
