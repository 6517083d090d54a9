import { Migration } from '@mikro-orm/migrations';

/** The counters of rate-limiter-flexible's PostgreSQL store (its own layout), shared by every process. */
export class Migration20261122010000_login_rate_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table login_rate_limits (
  key varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);`);
  }
}
