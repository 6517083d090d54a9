import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebhookConfigRepository } from '../../domain/ports.ts';
import { WebhookConfig, type Scope } from '../../domain/webhook-config.ts';
import { withDriverConnection } from './driver.ts';
import type { FamilyMemo } from './family-memo.ts';
import { CONFIG_COLUMNS, configValues, toConfig, type ConfigRow } from './rows.ts';
import { isStoredId } from './stored-ids.ts';

/**
 * SQL past the ORM: every event looks up its receiver's configuration, so this is on every write path. What this
 * unit of work read once it answers again (a command's events and its result go to the same receiver).
 */
export class SqlWebhookConfigRepository implements WebhookConfigRepository {
  private readonly seen = new Map<string, Promise<WebhookConfig | null>>();
  constructor(private readonly em: EntityManager, private readonly families: FamilyMemo) {}

  find(accountId: string, scope: Scope): Promise<WebhookConfig | null> {
    const key = `${accountId}/${scope}`;
    let found = this.seen.get(key);
    if (!found) this.seen.set(key, (found = this.select(accountId, scope)));
    return found.then((config) => config && new WebhookConfig({ ...config }));
  }

  private async select(accountId: string, scope: Scope): Promise<WebhookConfig | null> {
    if (!isStoredId(accountId)) return null;
    return withDriverConnection(this.em, async (client) => {
      const { rows: [row] } = await client.query<ConfigRow>({
        name: 'webhook-config-find', text: `select ${CONFIG_COLUMNS} from webhook_configs where account_id = $1 and scope = $2`,
        values: [accountId, scope],
      });
      return row ? toConfig(row) : null;
    });
  }

  /**
   * Inserts or replaces the account's configuration of that scope, in the unit of work at once. Its health is the
   * record of attempts' to write (delivery-queue.ts), under the row's lock: a save only starts it afresh, as
   * WebhookConfig.configure says, and never puts back what it read.
   */
  async save(config: WebhookConfig): Promise<void> {
    this.seen.delete(`${config.accountId}/${config.scope}`);
    this.families.forget();
    await withDriverConnection(this.em, (client) => client.query({
      name: 'webhook-config-save',
      text: `insert into webhook_configs (${CONFIG_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
        on conflict (account_id, scope) do update set url = excluded.url, transformer = excluded.transformer,
          version = excluded.version, signature_key = excluded.signature_key, enabled = excluded.enabled,
          updated_at = excluded.updated_at, previous_signature_key = excluded.previous_signature_key,
          previous_key_expires_at = excluded.previous_key_expires_at, disabled_reason = excluded.disabled_reason,
          failing_since = case when webhook_configs.url is distinct from excluded.url or (excluded.enabled and not webhook_configs.enabled)
            then null else webhook_configs.failing_since end`,
      values: configValues(config),
    }));
  }

  async dropExpiredKeys(now: Date): Promise<number> {
    this.seen.clear();
    this.families.forget();
    return withDriverConnection(this.em, async (client) => (await client.query({
      name: 'webhook-config-drop-expired-keys',
      text: `update webhook_configs set previous_signature_key = null, previous_key_expires_at = null where previous_key_expires_at <= $1`,
      values: [now],
    })).rowCount ?? 0);
  }
}
