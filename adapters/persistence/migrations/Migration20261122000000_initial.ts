import { Migration } from '@mikro-orm/migrations';
import { SEEDED_CANCELLATION_REASONS } from '../../../domain/cancellation.ts';

export class Migration20261122000000_initial extends Migration {
  override async up(): Promise<void> {
    // Aggregates refer to each other by id, so the ORM cannot order its inserts by relation: foreign keys
    // are checked when the transaction commits, which is where a unit of work is whole anyway.
    this.addSql(`
create table accounts (
  id uuid primary key,
  name text not null,
  role text not null check (role in ('brand', 'partner')),
  parent_id uuid references accounts (id) deferrable initially deferred,
  created_at timestamptz not null
);
create index accounts_parent_id_idx on accounts (parent_id) where parent_id is not null;

create table contacts (
  id uuid primary key,
  account_id uuid not null references accounts (id) deferrable initially deferred,
  email text not null,
  api_access boolean not null,
  created_at timestamptz not null
);
create unique index contacts_email_lower_key on contacts (lower(email));
create index contacts_account_id_idx on contacts (account_id);

create table webhook_configs (
  id uuid primary key,
  account_id uuid not null references accounts (id) deferrable initially deferred,
  scope text not null check (scope in ('brand', 'partner')),
  url text,
  transformer text not null check (transformer in ('default', 'partner-format')),
  version text not null check (version in ('1.0.0', '1.1.0', '1.3.0')),
  signature_key text,
  enabled boolean not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (account_id, scope)
);

create sequence order_number_seq start with 1000000001 maxvalue 9999999999;

-- Listings read per partner id, newest first, ties by api_id (CONTRACT §8): one index-only top-k per
-- partner of the scope, merged (see docs/BENCHMARKS.md). Counts use the small (partner_id) index.
-- Aggressive autovacuum keeps the visibility map fresh, or index-only scans turn into heap scans.
create table jobs (
  api_id text primary key,
  brand_account_id uuid not null references accounts (id) deferrable initially deferred,
  partner_id uuid references accounts (id) deferrable initially deferred,
  name text not null,
  status text not null check (status in ('new', 'open', 'accepted', 'appointment_confirmed', 'started', 'finished',
    'completed', 'invoice sent', 'closed', 'on hold', 'brand_cancellation_pending', 'cancelled')),
  invoicing_eid text,
  eid text,
  ext_partner_id text,
  customer jsonb,
  customer_billing jsonb,
  shipping_address jsonb,
  products jsonb not null default '[]',
  documents jsonb not null default '[]',
  order_type text,
  project_id text,
  project_name text,
  appointment_start timestamptz,
  appointment_end timestamptz,
  start_timestamp timestamptz,
  finish_timestamp timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
) with (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
create index jobs_partner_listing_idx on jobs (partner_id, updated_at desc, api_id) include (status);
create index jobs_partner_active_listing_idx on jobs (partner_id, updated_at desc, api_id)
  where status not in ('new', 'cancelled', 'closed', 'completed', 'invoice sent');
create index jobs_partner_id_idx on jobs (partner_id);
create index jobs_brand_account_id_idx on jobs (brand_account_id);
create index jobs_name_idx on jobs (name);
create index jobs_invoicing_eid_idx on jobs (invoicing_eid) where invoicing_eid is not null;
create index jobs_ext_partner_id_idx on jobs (ext_partner_id) where ext_partner_id is not null;

create table invoices (
  id uuid primary key,
  order_id text not null references jobs (api_id) deferrable initially deferred,
  number text not null,
  type text not null check (type in ('invoice', 'credit_note')),
  status text not null check (status in ('sent', 'received', 'paid', 'written_off')),
  cancellation_status text check (cancellation_status in ('created', 'send_pending', 'sent', 'paid', 'written_off')),
  items jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index invoices_order_id_idx on invoices (order_id);

create table cancellation_reasons (
  name text primary key,
  outcome text not null check (outcome in ('cancelled', 'pending'))
);

create table order_mappings (
  brand_account_id uuid primary key references accounts (id) deferrable initially deferred,
  fields jsonb not null,
  updated_at timestamptz not null
);

-- The transactional outbox: one row per rendered event and receiver, written with the change itself.
create table events (
  seq bigint generated always as identity unique,
  id uuid primary key,
  account_id uuid not null references accounts (id) deferrable initially deferred,
  scope text not null check (scope in ('brand', 'partner')),
  type text not null,
  order_id text,
  payload jsonb not null,
  created_at timestamptz not null
);
create index events_account_seq_idx on events (account_id, seq desc);
`);
    for (const reason of SEEDED_CANCELLATION_REASONS) {
      this.addSql(`insert into cancellation_reasons (name, outcome) values ('${reason.name}', '${reason.outcome}');`);
    }
  }
}
