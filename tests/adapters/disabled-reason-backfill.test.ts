import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withDriverConnection } from '../../adapters/persistence/driver.ts';
import { Migration20261127120000_disabled_reason_backfill } from '../../adapters/persistence/migrations/Migration20261127120000_disabled_reason_backfill.ts';
import { sharedDatabase } from '../support/shared.ts';

// The backfill on rows as the endpoint-health migration left them, in a transaction rolled back: the shared database
// keeps its schema.
const test = suite('migration: endpoints disabled before endpoint health were disabled by their integrators');

test('a disabled endpoint without a reason gets "integrator"; then enabled and disabledReason can no longer disagree', async () => {
  const { orm } = await sharedDatabase();
  const rollback = new Error('rollback');
  const seen = await orm.em
    .fork()
    .transactional((em) =>
      withDriverConnection(em, async (client) => {
        await client.query('set constraints all immediate');
        await client.query('alter table webhook_configs drop constraint webhook_configs_disabled_reason_check_enabled');
        const accountId = randomUUID();
        await client.query(
          `insert into accounts (id, name, role, created_at) values ($1, 'backfill', 'brand', now())`,
          [accountId],
        );
        for (const [scope, enabled] of [
          ['brand', false],
          ['partner', true],
        ] as const) {
          await client.query(
            `insert into webhook_configs (id, account_id, scope, url, transformer, version, signature_key, enabled, created_at, updated_at)
        values ($1, $2, $3, null, 'default', '1.3.0', null, $4, now(), now())`,
            [randomUUID(), accountId, scope, enabled],
          );
        }
        const migration = new Migration20261127120000_disabled_reason_backfill(orm.em.getDriver(), orm.config);
        await migration.up();
        for (const sql of migration.getQueries()) await client.query(String(sql));
        const { rows } = await client.query(
          `select scope, enabled, disabled_reason from webhook_configs where account_id = $1 order by scope`,
          [accountId],
        );
        await client.query('savepoint broken');
        const refused = await client
          .query(`update webhook_configs set enabled = false where account_id = $1 and scope = 'partner'`, [accountId])
          .then(
            () => null,
            (error: { code?: string }) => error.code,
          );
        await client.query('rollback to savepoint broken');
        return { rows, refused };
      }).then((value) => {
        throw Object.assign(rollback, { value });
      }),
    )
    .catch((error) => {
      if (error !== rollback) throw error;
      return (error as Error & { value: unknown }).value;
    });
  assert.equal(seen, {
    rows: [
      { scope: 'brand', enabled: false, disabled_reason: 'integrator' },
      { scope: 'partner', enabled: true, disabled_reason: null },
    ],
    refused: '23514',
  });
});

test.run();
