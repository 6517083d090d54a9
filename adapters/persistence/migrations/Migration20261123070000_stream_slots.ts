import { Migration } from '@mikro-orm/migrations';

/**
 * Legacy listings streaming at once per account (CONTRACT §1: at most 2), held by any process sharing the server:
 * a slot is a row under a lease that its stream renews, so that a process that dies frees its slots by itself.
 */
export class Migration20261123070000_stream_slots extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table stream_slots (
  account_id uuid not null,
  slot smallint not null,
  holder uuid not null,
  lease_until timestamptz not null,
  primary key (account_id, slot)
);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists stream_slots;');
  }
}
