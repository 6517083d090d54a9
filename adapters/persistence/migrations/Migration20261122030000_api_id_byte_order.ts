import { Migration } from '@mikro-orm/migrations';

/**
 * `jobApiId ascending` (CONTRACT §8) is byte order, whatever the server's locale: the same on every PostgreSQL,
 * on the embedded one and in JavaScript, and much cheaper to compare when deep pages sort or merge keys.
 */
export class Migration20261122030000_api_id_byte_order extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table jobs alter column api_id type text collate "C";`);
    this.addSql(`alter table invoices alter column order_id type text collate "C";`);
  }
}
