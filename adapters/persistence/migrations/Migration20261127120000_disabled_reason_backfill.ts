import { Migration } from '@mikro-orm/migrations';

/**
 * Endpoints disabled before endpoint health existed were disabled by their integrators (nothing else could): the
 * migration that added disabled_reason left them null. Every write keeps `enabled` and `disabled_reason` together
 * (WebhookConfig.configure, and the record of attempts disabling with 'failing'), so the check makes it a rule.
 */
export class Migration20261127120000_disabled_reason_backfill extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
update webhook_configs set disabled_reason = 'integrator' where not enabled and disabled_reason is null;
update webhook_configs set disabled_reason = null where enabled and disabled_reason is not null;
alter table webhook_configs add constraint webhook_configs_disabled_reason_check_enabled check (enabled = (disabled_reason is null));
`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table webhook_configs drop constraint webhook_configs_disabled_reason_check_enabled;`);
  }
}
