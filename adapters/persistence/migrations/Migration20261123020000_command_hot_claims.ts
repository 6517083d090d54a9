import { Migration } from '@mikro-orm/migrations';

/**
 * The command queue's write path: a claim sets the lease, the claim token and the attempt count, columns in no index.
 * Pages kept 30 % free let that update stay on its page without a new entry in every index (a HOT update), so the
 * ordered scan of the accepted commands that every claim starts with does not wade through an entry per claim
 * until the next vacuum.
 */
export class Migration20261123020000_command_hot_claims extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table commands set (fillfactor = 70);');
  }

  override async down(): Promise<void> {
    this.addSql('alter table commands reset (fillfactor);');
  }
}
