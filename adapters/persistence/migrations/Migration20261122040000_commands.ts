import { Migration } from '@mikro-orm/migrations';

/** Commands by account and `_cid`: the idempotency key, the body it came with, and the answer given. */
export class Migration20261122040000_commands extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table commands (
  account_id uuid not null references accounts (id) deferrable initially deferred,
  cid text not null,
  type text not null,
  body jsonb not null,
  status text not null check (status in ('accepted', 'succeeded', 'failed')),
  answer jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (account_id, cid)
);`);
  }
}
