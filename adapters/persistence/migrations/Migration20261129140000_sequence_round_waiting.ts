import { Migration } from '@mikro-orm/migrations';

// The feed sequencer's advisory lock key ('pbi1'); a migration keeps its own copy (what it wrote must not move with
// later code).
const SEQUENCER_LOCK = 0x7062_6931;

/**
 * The feed read's round (CONTRACT §10: a reader sees what committed before it asked). It waits for the lock where
 * sequence_round gives up: a round under way may have taken its snapshot before the reader's event committed, and
 * would not position it. Once the lock is had, the numbering's own statement takes a snapshot that holds that event.
 */
export class Migration20261129140000_sequence_round_waiting extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function sequence_round_waiting(p_limit integer) returns integer language plpgsql as $$
begin
  perform pg_advisory_xact_lock(${SEQUENCER_LOCK});
  return sequence_events(p_limit);
end
$$;
`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function sequence_round_waiting(integer);');
  }
}
