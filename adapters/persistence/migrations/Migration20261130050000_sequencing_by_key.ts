import { Migration } from '@mikro-orm/migrations';

/**
 * Two costs a delivery bench showed (pg_stat_statements and auto_explain on a server of its own):
 * - A sequencing round found its batch by the unpositioned index, then updated the events by joining the whole
 *   partition: where the planner judged a partition small (tens of thousands of rows), it read all of it, sorted, in
 *   every round (17 of the 68 ms of a round of 1,000). A round touches at most its batch: with sequential scans off,
 *   the update looks each event up by its key (auto_explain, a partition of 43,500 rows). A later `create or replace`
 *   of the function resets this unless it says it again (tests/adapters/sequencing-settings.test.ts fails then).
 * - The queue's rows are deleted as they are delivered, and every claim walks the dead entries of its due index until
 *   a vacuum (13 of a steady claim's 32 ms after 40,000 deliveries). Autovacuum's default waits for a fifth of the
 *   table to be dead; the queue is now taken once 1,000 rows are, at autovacuum's next look (a minute by default).
 */
export class Migration20261130050000_sequencing_by_key extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter function sequence_events(integer) set enable_seqscan to 'off';");
    this.addSql(
      'alter table delivery_queue set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);',
    );
  }

  override async down(): Promise<void> {
    this.addSql('alter function sequence_events(integer) reset enable_seqscan;');
    this.addSql('alter table delivery_queue reset (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold);');
  }
}
