import { Migration } from '@mikro-orm/migrations';

// The feed sequencer's advisory lock key ('pbi1'); a migration keeps its own copy (what it wrote must not move with
// later code).
const SEQUENCER_LOCK = 0x7062_6931;

/**
 * A round of the feed's sequencer in one statement (it took four round trips: begin, the lock, the round, commit):
 * the lock is tried, and the numbering done by a statement of its own after it, so that its snapshot is taken once the
 * lock is held (each statement of a plpgsql function takes one, as the delivery claim's round does). A round that
 * finds the lock taken does nothing. The lock is held to the end of the caller's transaction: the statement's own, or
 * the unit of work's.
 */
export class Migration20261129130000_sequence_round extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function sequence_round(p_limit integer) returns integer language plpgsql as $$
begin
  if not pg_try_advisory_xact_lock(${SEQUENCER_LOCK}) then
    return 0;
  end if;
  return sequence_events(p_limit);
end
$$;
`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function sequence_round(integer);');
  }
}
