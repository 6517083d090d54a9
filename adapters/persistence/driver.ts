import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type pg from 'pg';

/**
 * Runs work on a driver connection, past the ORM: for the hot paths, where query building and hydration would
 * cost more than the query. Inside a unit of work it is the transaction's own connection (knex's transaction
 * client hands out exactly that one); otherwise one from the ORM's pool.
 */
export async function withDriverConnection<T>(em: EntityManager, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const knex = (em.getTransactionContext() as Knex.Transaction | undefined) ?? em.getKnex();
  const client = (await knex.client.acquireConnection()) as pg.PoolClient;
  try {
    return await work(client);
  } finally {
    await knex.client.releaseConnection(client);
  }
}
