import { UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../../domain/errors.ts';
import type { BackgroundWork, Repositories } from '../../domain/ports.ts';
import { mikroOrmRepositories } from './repositories.ts';
import { WorkNotices } from './work-notices.ts';

export type Transact = <T>(work: (repositories: Repositories) => Promise<T>) => Promise<T>;

export interface UnitOfWorkOptions {
  /** Announce created work with NOTIFY (a server shared by several processes). */
  notifyServer?: boolean;
  /** Called after a commit that created background work. */
  committed?: (kinds: ReadonlySet<BackgroundWork>) => void;
}

/**
 * One unit of work: a fresh EntityManager, one transaction, one flush at its end. A unique index is
 * the backstop for the domain's own checks; its violation is a conflict, never a driver error.
 */
export const mikroOrmTransact = (orm: MikroORM, options: UnitOfWorkOptions = {}): Transact => async (work) => {
  let notices: WorkNotices | undefined;
  try {
    const result = await orm.em.fork().transactional((em) => {
      notices = new WorkNotices(em, options.notifyServer ?? false);
      return work(mikroOrmRepositories(em, notices));
    });
    if (notices!.kinds.size > 0) options.committed?.(notices!.kinds);
    return result;
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      throw new DomainError('CONFLICT', 'The change conflicts with existing data.');
    }
    throw error;
  }
};

/** Reads without a transaction: a fresh EntityManager per call, so no identity map outlives the request. */
export const mikroOrmRead = (orm: MikroORM): Transact => (work) => {
  const em = orm.em.fork();
  return work(mikroOrmRepositories(em, new WorkNotices(em, false)));
};
