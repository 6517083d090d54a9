import { UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../../domain/errors.ts';
import type { Repositories } from '../../domain/ports.ts';
import { mikroOrmRepositories } from './repositories.ts';

export type Transact = <T>(work: (repositories: Repositories) => Promise<T>) => Promise<T>;

/**
 * One unit of work: a fresh EntityManager, one transaction, one flush at its end. A unique index is
 * the backstop for the domain's own checks; its violation is a conflict, never a driver error.
 */
export const mikroOrmTransact = (orm: MikroORM): Transact => async (work) => {
  try {
    return await orm.em.fork().transactional((em) => work(mikroOrmRepositories(em)));
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      throw new DomainError('CONFLICT', 'The change conflicts with existing data.');
    }
    throw error;
  }
};

/** Reads without a transaction: a fresh EntityManager per call, so no identity map outlives the request. */
export const mikroOrmRead = (orm: MikroORM): Transact => (work) => work(mikroOrmRepositories(orm.em.fork()));
