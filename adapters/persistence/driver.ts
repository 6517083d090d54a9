import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { unavailableOr } from './unavailable.ts';

/**
 * Runs work on a driver connection, past the ORM: for the hot paths, where query building and hydration would
 * cost more than the query. Inside a unit of work it is the transaction's own connection (knex's transaction
 * client hands out exactly that one); otherwise one from the ORM's pool.
 */
export async function withDriverConnection<T>(
  em: EntityManager,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const knex = (em.getTransactionContext() as Knex.Transaction | undefined) ?? em.getKnex();
  let client: pg.PoolClient;
  try {
    client = (await knex.client.acquireConnection()) as pg.PoolClient;
  } catch (error) {
    throw unavailableOr(error);
  }
  try {
    return await work(client);
  } catch (error) {
    // No driver error that says the database is away escapes as one: the core knows it as UNAVAILABLE.
    throw unavailableOr(error);
  } finally {
    await knex.client.releaseConnection(client);
  }
}

/**
 * Where a read that a replica may answer (CONTRACT §12) runs: on a replica when the unit of work allows it, else as
 * withDriverConnection does.
 */
export type ReadOn = <T>(em: EntityManager, work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;
