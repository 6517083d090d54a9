import { Migration } from '@mikro-orm/migrations';

/**
 * history_partitions_ahead (migration 20261130010000) makes the days after p_from's only, never the day under way:
 * that day's rows may be on their way into a default partition, and an attach under them fails their inserts ("violates
 * partition constraint"). A day under way without its partition (the legacy partition dropped, the clock moved) keeps
 * its rows in the default partition, which the row purge takes.
 */
export class Migration20261130040000_history_days_after extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create or replace function history_partitions_ahead(p_from timestamptz, p_days integer) returns integer language plpgsql
  set lock_timeout = '200ms' set timezone = 'UTC' set datestyle = 'ISO, YMD' as $$
declare
  made integer := 0;
  day timestamptz;
  v_parent text;
  v_part text;
begin
  for i in 1 .. p_days loop
    day := date_trunc('day', p_from) + make_interval(days => i);
    begin
      foreach v_parent in array array['events', 'deliveries', 'delivery_attempts'] loop
        v_part := v_parent || '_p' || to_char(day, 'YYYYMMDD');
        continue when exists (select 1 from history_partitions h where h.parent = v_parent
          and (h.lower is null or h.lower < day + interval '1 day') and h.upper > day);
        execute format('create table %I (like %I including defaults including constraints)%s', v_part, v_parent,
          case v_parent when 'deliveries' then ' with (fillfactor = 70)' else '' end);
        execute format('alter table %I attach partition %I for values from (%L) to (%L)', v_parent, v_part, day,
          day + interval '1 day');
        made := made + 1;
      end loop;
    exception when check_violation or lock_not_available or deadlock_detected then
      -- Rows of that day are in a default partition already, or a table is busy: the day is left as it is.
      null;
    end;
  end loop;
  return made;
end
$$;
`);
  }
}
