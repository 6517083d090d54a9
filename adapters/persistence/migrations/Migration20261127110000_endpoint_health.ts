import { Migration } from '@mikro-orm/migrations';

/**
 * Endpoint health (CONTRACT §11): since when an endpoint fails, why it was disabled, and when its contacts were last
 * warned (at most once a day). Each attempt keeps what was sent and answered, deleted with its delivery. `json`, not
 * `jsonb`: headers are kept as the sender wrote them, in their order.
 */
export class Migration20261127110000_endpoint_health extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table webhook_configs
  add column failing_since timestamptz,
  add column disabled_reason text check (disabled_reason in ('failing', 'integrator')),
  add column failure_mailed_at timestamptz;

alter table delivery_attempts
  add column request_url text,
  add column request_headers json,
  add column response_headers json,
  add column response_body text;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
alter table webhook_configs drop column failing_since, drop column disabled_reason, drop column failure_mailed_at;
alter table delivery_attempts drop column request_url, drop column request_headers, drop column response_headers, drop column response_body;
`);
  }
}
