import { Migration } from '@mikro-orm/migrations';

/**
 * The rate-limit counters and the stream slots are kept in unlogged tables: they are rewritten by nearly every
 * request, and losing them in a crash only resets counters and frees slots, which is what a restart means anyway.
 * A transaction that writes only unlogged tables does not wait for the WAL flush at commit, so requests of one
 * account no longer queue behind each other's fsync on the counter row they share (they did under bench:commands).
 */
export class Migration20261123080000_unlogged_counters extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table login_rate_limits set unlogged;');
    this.addSql('alter table stream_slots set unlogged;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table login_rate_limits set logged;');
    this.addSql('alter table stream_slots set logged;');
  }
}
