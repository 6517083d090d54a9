import { Migration } from '@mikro-orm/migrations';

/**
 * The operator console finds a command by its `_cid` across accounts (admin.commands.find, admin.deliveries.search):
 * the key starts with the account. `cid` never changes, so the claims' and finishes' updates stay HOT.
 */
export class Migration20261130030000_command_cid_index extends Migration {
  override async up(): Promise<void> {
    // Built beforehand without blocking writes by `db:migrate -- --prepare-partitions` (PREPARE_KEYS), if it ran.
    this.addSql('create index if not exists commands_cid_idx on commands (cid);');
  }
}
