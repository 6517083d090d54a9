import { UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../../domain/errors.ts';
import type { BackgroundWork, Repositories } from '../../domain/ports.ts';
import { mikroOrmRepositories } from './repositories.ts';
import { unavailableOr } from './unavailable.ts';
import { WorkNotices } from './work-notices.ts';

export type Transact = <T>(work: (repositories: Repositories) => Promise<T>) => Promise<T>;

export interface UnitOfWorkOptions {
  /** Called after a commit that created background work: it wakes the workers (see work-announcer.ts). */
  committed?: (kinds: ReadonlySet<BackgroundWork>) => void;
}

/**
 * One unit of work: a fresh EntityManager, one transaction, one flush at its end. A unique index is
 * the backstop for the domain's own checks; its violation is a conflict, never a driver error.
 */
export const mikroOrmTransact = (orm: MikroORM, options: UnitOfWorkOptions = {}): Transact => async (work) => {
  let notices: WorkNotices | undefined;
  try {
    const result = await orm.em.fork().transactional(async (em) => {
      notices = new WorkNotices();
      const { repositories, workDone } = mikroOrmRepositories(em, notices);
      const value = await work(repositories);
      await workDone();
      return value;
    });
    if (notices!.kinds.size > 0) options.committed?.(notices!.kinds);
    return result;
  } catch (error) {
    // From the ORM's flush, or from SQL run on the driver (23505: unique_violation).
    if (error instanceof UniqueConstraintViolationException || (error as { code?: unknown }).code === '23505') {
      throw new DomainError('CONFLICT', 'The change conflicts with existing data.');
    }
    throw unavailableOr(error);
  }
};


/**
 * Work without a transaction, each statement committing on its own: reads, and writes of one atomic statement (a
 * command accepted). A fresh EntityManager per call, so no identity map outlives the request.
 */
export const mikroOrmAutocommit = (orm: MikroORM, options: UnitOfWorkOptions = {}): Transact => async (work) => {
  const em = orm.em.fork();
  const notices = new WorkNotices();
  const { repositories, workDone } = mikroOrmRepositories(em, notices);
  try {
    const result = await work(repositories);
    await workDone();
    return result;
  } catch (error) {
    throw unavailableOr(error);
  } finally {
    // Each statement committed on its own: what was created stands even when a later one failed.
    if (notices.kinds.size > 0) options.committed?.(notices.kinds);
  }
};
