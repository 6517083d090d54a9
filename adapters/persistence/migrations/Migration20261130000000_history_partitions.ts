import { Migration } from '@mikro-orm/migrations';

/**
 * The history (`events`, `deliveries`, `delivery_attempts`) partitioned by the event's time, a UTC day a partition, so
 * that retention drops a day whole instead of deleting its rows (docs/architecture.md, "History in time partitions").
 * Each table's rows from before this migration become one partition of the past, `<table>_legacy`, attached as they
 * are: no row is copied. Attempts logged before it have no event time, and are dated `-infinity` (in that partition).
 *
 * On a live system the slow part, building the new keys and checking the rows' bound, runs first without blocking
 * anyone: `npm run db:prepare-partitions` runs PREPARE_STATEMENTS with `concurrently` (docs/operators.md). This
 * migration then finds them made and only swaps the tables, under a lock held for catalog changes alone.
 */
export const PREPARE_KEYS = (concurrently: boolean) => {
  const index = `create unique index ${concurrently ? 'concurrently ' : ''}if not exists`;
  const plain = `create index ${concurrently ? 'concurrently ' : ''}if not exists`;
  return [
    "alter table delivery_attempts add column if not exists created_at timestamptz not null default '-infinity'",
    `${index} events_id_time_key on events (id, created_at)`,
    `${plain} events_feed_position_idx on events (endpoint_id, position) where position is not null`,
    `${index} deliveries_id_time_key on deliveries (id, created_at)`,
    `${index} deliveries_event_time_key on deliveries (event_id, created_at)`,
    `${plain} deliveries_created_at_idx on deliveries (created_at)`,
    `${index} delivery_attempts_id_time_key on delivery_attempts (id, created_at)`,
    // Not the history's: the operator console's searches by _cid (migration 20261130030000), built here ahead too.
    `${plain} commands_cid_idx on commands (cid)`,
  ];
};

export const HISTORY_TABLES = ['events', 'deliveries', 'delivery_attempts'] as const;

/** The new keys of PREPARE_KEYS that an interrupted CREATE INDEX CONCURRENTLY left invalid. */
export const INVALID_INDEXES = `select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
  where not i.indisvalid and c.relname in ('events_id_time_key', 'events_feed_position_idx', 'deliveries_id_time_key',
    'deliveries_event_time_key', 'deliveries_created_at_idx', 'delivery_attempts_id_time_key', 'commands_cid_idx')`;

/**
 * The check that every row is before `bound` (an ISO time): added without a scan, then validated without blocking
 * writes. Its comment keeps the bound as written, for the migration to read whatever the session's DateStyle.
 */
export const PREPARE_BOUND = (table: (typeof HISTORY_TABLES)[number], bound: string) => [
  `alter table ${table} drop constraint if exists ${table}_before_partitions`,
  `alter table ${table} add constraint ${table}_before_partitions check (created_at < '${bound}') not valid`,
  `comment on constraint ${table}_before_partitions on ${table} is '${bound}'`,
  `alter table ${table} validate constraint ${table}_before_partitions`,
];

/**
 * A UTC day boundary `days` after both now and the newest event: where the legacy partition ends. Until the tables are
 * swapped, the prepared check refuses history written past it (docs/operators.md).
 */
export const legacyBoundSql = (days: number) => `select extract(epoch from (date_trunc('day',
  greatest(now(), coalesce(max(created_at), now())) at time zone 'UTC') + interval '${days} days') at time zone 'UTC')
  * 1000 as ms from events`;

// Each old index keeps its job under the partitioned table: renamed out of the way, the parent's index of the same
// definition attaches it instead of building another.
const SWAP = `
alter table delivery_attempts drop constraint delivery_attempts_delivery_id_fkey;
alter table deliveries drop constraint deliveries_event_id_fkey;

alter table events rename to events_legacy;
alter table events_legacy alter column seq drop identity;
alter table events_legacy drop constraint events_pkey;
alter table events_legacy add constraint events_legacy_pkey primary key using index events_id_time_key;
alter table events_legacy drop constraint events_seq_key;
alter table events_legacy drop constraint events_account_id_fkey;
drop index events_feed_idx;
alter index events_feed_position_idx rename to events_legacy_feed_idx;
alter index events_account_seq_idx rename to events_legacy_account_seq_idx;
alter index events_created_at_idx rename to events_legacy_created_at_idx;
alter index events_feed_order_idx rename to events_legacy_feed_order_idx;
alter index events_unpositioned_idx rename to events_legacy_unpositioned_idx;
create table events (
  seq bigint generated always as identity,
  id uuid not null,
  account_id uuid not null,
  scope text not null constraint events_scope_check check (scope in ('brand', 'partner')),
  type text not null,
  order_id text,
  payload json not null,
  created_at timestamptz not null,
  endpoint_id uuid,
  position bigint,
  primary key (id, created_at)
) partition by range (created_at);
create index events_account_seq_idx on events (account_id, seq desc);
create index events_created_at_idx on events (created_at);
create index events_feed_idx on events (endpoint_id, position) where position is not null;
create index events_feed_order_idx on events (endpoint_id, order_id, position) where position is not null and order_id is not null;
create index events_unpositioned_idx on events (seq) where position is null and endpoint_id is not null;
select setval(pg_get_serial_sequence('events', 'seq'), coalesce((select max(seq) from events_legacy), 0) + 1, false);

alter table deliveries rename to deliveries_legacy;
alter table deliveries_legacy alter column seq drop identity;
alter table deliveries_legacy drop constraint deliveries_pkey;
alter table deliveries_legacy add constraint deliveries_legacy_pkey primary key using index deliveries_id_time_key;
alter table deliveries_legacy drop constraint deliveries_event_id_key;
alter table deliveries_legacy add constraint deliveries_legacy_event_id_key unique using index deliveries_event_time_key;
alter index deliveries_account_idx rename to deliveries_legacy_account_idx;
alter index deliveries_endpoint_failed_idx rename to deliveries_legacy_endpoint_failed_idx;
alter index deliveries_endpoint_log_idx rename to deliveries_legacy_endpoint_log_idx;
alter index deliveries_endpoint_order_idx rename to deliveries_legacy_endpoint_order_idx;
alter index deliveries_created_at_idx rename to deliveries_legacy_created_at_idx;
create table deliveries (
  id uuid not null,
  seq bigint generated always as identity,
  event_id uuid not null,
  endpoint_id uuid not null,
  account_id uuid not null,
  order_id text collate "C",
  status text not null constraint deliveries_status_check check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  failed_at timestamptz,
  constraint deliveries_failed_at_whole check ((failed_at is not null) = (status = 'failed')),
  primary key (id, created_at),
  unique (event_id, created_at)
) partition by range (created_at);
create index deliveries_account_idx on deliveries (account_id, created_at desc);
create index deliveries_endpoint_failed_idx on deliveries (endpoint_id, created_at desc, seq desc) where failed_at is not null;
create index deliveries_endpoint_log_idx on deliveries (endpoint_id, created_at desc, seq desc);
create index deliveries_endpoint_order_idx on deliveries (endpoint_id, order_id, created_at desc, seq desc) where order_id is not null;
create index deliveries_created_at_idx on deliveries (created_at);
select setval(pg_get_serial_sequence('deliveries', 'seq'), coalesce((select max(seq) from deliveries_legacy), 0) + 1, false);

alter table delivery_attempts rename to delivery_attempts_legacy;
alter table delivery_attempts_legacy alter column id drop identity;
alter table delivery_attempts_legacy drop constraint delivery_attempts_pkey;
alter table delivery_attempts_legacy add constraint delivery_attempts_legacy_pkey primary key using index delivery_attempts_id_time_key;
alter index delivery_attempts_delivery_idx rename to delivery_attempts_legacy_delivery_idx;
alter index delivery_attempts_endpoint_at_idx rename to delivery_attempts_legacy_endpoint_at_idx;
create table delivery_attempts (
  id bigint generated always as identity,
  delivery_id uuid not null,
  at timestamptz not null,
  status_code integer,
  duration_ms integer not null,
  error text,
  request_url text,
  request_headers json,
  response_headers json,
  response_body text,
  endpoint_id uuid,
  created_at timestamptz not null default '-infinity',
  primary key (id, created_at)
) partition by range (created_at);
create index delivery_attempts_delivery_idx on delivery_attempts (delivery_id, id);
create index delivery_attempts_endpoint_at_idx on delivery_attempts (endpoint_id, at);
select setval(pg_get_serial_sequence('delivery_attempts', 'id'), coalesce((select max(id) from delivery_attempts_legacy), 0) + 1, false);

create table events_default partition of events default;
create table deliveries_default partition of deliveries default with (fillfactor = 70);
create table delivery_attempts_default partition of delivery_attempts default;
`;

export class Migration20261130000000_history_partitions extends Migration {
  override async up(): Promise<void> {
    // A deployment that ran db:prepare-partitions keeps the bound it checked, and its keys; otherwise they are made
    // and checked here.
    const checked = (await this.execute(
      `select conrelid::regclass::text as name, obj_description(oid, 'pg_constraint') as bound
       from pg_constraint where conname like '%_before_partitions' and convalidated`,
    )) as { name: string; bound: string | null }[];
    const bounds = new Map(checked.map((r) => [r.name, r.bound === null ? Number.NaN : Date.parse(r.bound)]));
    // Two days ahead: a write just past midnight, before the lock below, still falls within the bound.
    const [{ ms: next }] = (await this.execute(legacyBoundSql(2))) as [{ ms: string }];
    const prepared = bounds.get('events');
    const bound = new Date(prepared !== undefined && !Number.isNaN(prepared) ? prepared : Number(next)).toISOString();
    // Taken first and at once, in the order writers take them (event, delivery, attempt): a writer half-way through
    // its transaction finishes it, instead of waiting on a table already locked here while this waits on it.
    // Not had within 5 s (a long transaction on them), the migration stops and changes nothing: run it again.
    this.addSql("set local lock_timeout = '5s';");
    this.addSql('lock table events, deliveries, delivery_attempts in access exclusive mode;');
    this.addSql(`do $$ declare r record; begin
      for r in ${INVALID_INDEXES} loop execute format('drop index %I', r.name); end loop; end $$;`);
    for (const sql of PREPARE_KEYS(false)) this.addSql(`${sql};`);
    for (const table of HISTORY_TABLES) {
      if (bounds.get(table) === new Date(bound).getTime()) continue;
      for (const sql of PREPARE_BOUND(table, bound)) this.addSql(`${sql};`);
    }
    this.addSql(SWAP);
    // The partition's own bound guards its rows from now on: the check is dropped, with nothing to scan.
    for (const table of HISTORY_TABLES) {
      this.addSql(`alter table ${table} attach partition ${table}_legacy for values from (minvalue) to ('${bound}');`);
      this.addSql(`alter table ${table}_legacy drop constraint ${table}_before_partitions;`);
    }
  }
}
