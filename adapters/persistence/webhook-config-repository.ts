import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebhookConfigRepository } from '../../domain/ports.ts';
import { type Scope, WebhookConfig } from '../../domain/webhook-config.ts';
import { forgettingAround, heldOrRead } from './detached.ts';
import { withDriverConnection } from './driver.ts';
import type { FamilyMemo } from './family-memo.ts';
import { CONFIG_COLUMNS, type ConfigRow, configValues, pairValues, toConfig } from './rows.ts';
import { isStoredId } from './stored-ids.ts';

/**
 * SQL past the ORM: every event looks up its receiver's configuration, so this is on every write path. What this
 * unit of work read once it answers again (a command's events and its result go to the same receiver).
 */
export class SqlWebhookConfigRepository implements WebhookConfigRepository {
  private readonly seen = new Map<string, Promise<WebhookConfig | null>>();
  constructor(
    private readonly em: EntityManager,
    private readonly families: FamilyMemo,
  ) {}

  find(accountId: string, scope: Scope): Promise<WebhookConfig | null> {
    // A failed read is not kept: a round of the worker's is one long unit.
    const found = heldOrRead(this.seen, `${accountId}/${scope}`, () => this.select(accountId, scope));
    return found.then((config) => config && new WebhookConfig({ ...config }));
  }

  /** Read afresh under the lock, and remembered as what this unit of work saw. */
  findForChange(accountId: string, scope: Scope): Promise<WebhookConfig | null> {
    const found = this.select(accountId, scope, true);
    this.seen.set(`${accountId}/${scope}`, found);
    return found.then((config) => config && new WebhookConfig({ ...config }));
  }

  /** A save of one configuration (`key`) or of any: forgotten before it and after it, with the unit's families. */
  private writing<R>(key: string | null, write: () => Promise<R>): Promise<R> {
    const forget = () => (key === null ? this.seen.clear() : this.seen.delete(key));
    return forgettingAround(forget, () => this.families.writing(write));
  }

  private async select(accountId: string, scope: Scope, lock = false): Promise<WebhookConfig | null> {
    if (!isStoredId(accountId)) return null;
    return withDriverConnection(this.em, async (client) => {
      const {
        rows: [row],
      } = await client.query<ConfigRow>({
        name: lock ? 'webhook-config-find-for-change' : 'webhook-config-find',
        text: `select ${CONFIG_COLUMNS} from webhook_configs where account_id = $1 and scope = $2${lock ? ' for update' : ''}`,
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
    await this.writing(`${config.accountId}/${config.scope}`, () =>
      withDriverConnection(this.em, (client) =>
        client.query({
          name: 'webhook-config-save-v3',
          text: `insert into webhook_configs (${CONFIG_COLUMNS})
        values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
        on conflict (account_id, scope) do update set url = excluded.url, transformer = excluded.transformer,
          version = excluded.version, signature_key = excluded.signature_key, enabled = excluded.enabled,
          updated_at = excluded.updated_at, previous_signature_key = excluded.previous_signature_key,
          previous_key_expires_at = excluded.previous_key_expires_at, disabled_reason = excluded.disabled_reason,
          asymmetric_signing = excluded.asymmetric_signing, signing_private_key = excluded.signing_private_key,
          signing_public_key = excluded.signing_public_key, previous_signing_private_key = excluded.previous_signing_private_key,
          previous_signing_public_key = excluded.previous_signing_public_key, previous_signing_expires_at = excluded.previous_signing_expires_at,
          failing_since = case when webhook_configs.url is distinct from excluded.url or (excluded.enabled and not webhook_configs.enabled)
            then null else webhook_configs.failing_since end,
          last_ok_at = case
            when webhook_configs.url is distinct from excluded.url or (excluded.enabled and not webhook_configs.enabled)
            then null else webhook_configs.last_ok_at end`,
          values: configValues(config),
        }),
      ),
    );
  }

  async saveKeys(config: WebhookConfig): Promise<void> {
    await this.writing(`${config.accountId}/${config.scope}`, () =>
      withDriverConnection(this.em, (client) =>
        client.query({
          name: 'webhook-config-save-keys-v2',
          text: `update webhook_configs set signature_key = $2, previous_signature_key = $3, previous_key_expires_at = $4, updated_at = $5,
        asymmetric_signing = $6, signing_private_key = $7, signing_public_key = $8, previous_signing_private_key = $9,
        previous_signing_public_key = $10, previous_signing_expires_at = $11 where id = $1`,
          values: [
            config.id,
            config.signatureKey,
            config.previousKey?.value ?? null,
            config.previousKey?.expiresAt ?? null,
            config.updatedAt,
            ...pairValues(config),
          ],
        }),
      ),
    );
  }

  async dropExpiredKeys(now: Date): Promise<number> {
    return this.writing(null, () =>
      withDriverConnection(
        this.em,
        async (client) =>
          (
            await client.query({
              name: 'webhook-config-drop-expired-keys-v2',
              text: `update webhook_configs set
          previous_signature_key = case when previous_key_expires_at <= $1 then null else previous_signature_key end,
          previous_key_expires_at = case when previous_key_expires_at <= $1 then null else previous_key_expires_at end,
          previous_signing_private_key = case when previous_signing_expires_at <= $1 then null else previous_signing_private_key end,
          previous_signing_public_key = case when previous_signing_expires_at <= $1 then null else previous_signing_public_key end,
          previous_signing_expires_at = case when previous_signing_expires_at <= $1 then null else previous_signing_expires_at end
        where previous_key_expires_at <= $1 or previous_signing_expires_at <= $1`,
              values: [now],
            })
          ).rowCount ?? 0,
      ),
    );
  }
}
