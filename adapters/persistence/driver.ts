import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';

/**
 * Runs work on a driver connection of the ORM's own pool, past the ORM: for the hot read paths, where query
 * building and hydration would cost more than the query. Outside any unit of work; reads only.
 */
export async function withDriverConnection<T>(em: EntityManager, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const knex = em.getKnex();
  const client = (await knex.client.acquireConnection()) as pg.PoolClient;
  try {
    return await work(client);
  } finally {
    await knex.client.releaseConnection(client);
  }
}
