import { Migration } from '@mikro-orm/migrations';

/** `GET /metrics` counts the partner commands under way on every scrape: an index of them, instead of a table scan. */
export class Migration20261123060000_running_commands_idx extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index commands_running_idx on commands (seq) where status = 'running';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists commands_running_idx;');
  }
}
