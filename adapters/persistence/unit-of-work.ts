import { type EntityManager, type MikroORM, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { DomainError } from '../../domain/errors.ts';
import type { BackgroundWork, Repositories } from '../../domain/ports.ts';
import { type CurrentTrace, untraced } from '../../domain/trace.ts';
import { type ReadOn, withDriverConnection } from './driver.ts';
import type { ReadSession, ReplicaSet } from './replicas/replica-set.ts';
import { UnitRepositories } from './repositories.ts';
import { gate } from './statement-gate.ts';
import { unavailableOr } from './unavailable.ts';
import { WorkNotices } from './wake-ups/notices.ts';

export interface UnitOfWorkOptions {
  /** Called after a commit that created background work: it wakes the workers (see wake-ups/announcer.ts). */
  committed?: (kinds: ReadonlySet<BackgroundWork>) => void;
  /** The read replicas, for units that allow them (`replica`). */
  replicas?: ReplicaSet | undefined;
  /** Without replicas, told of each read a replica could have answered: the primary answered it. */
  served?: (database: 'primary') => void;
}

/**
 * One unit of work, as MikroORM's RequestContext has it: one EntityManager, forked when a repository is first asked
 * for, and the repositories on it, each built when first used. Everything a request does runs on it: the checks
 * before its use case as single statements, the use case in one transaction on the same EntityManager (`transaction`)
 * or as statements of their own (`statements`, for work whose one write is one atomic statement). `deps` is the
 * repositories with the process's services beside them. A transaction begins on the first call of a repository's
 * method, so work that never reaches the database (refused by its input, or with nothing to store) sends nothing. A
 * unit whose work failed is spent (see `spend`).
 */
class MikroOrmUnitOfWork<S extends object> {
  private fork: EntityManager | undefined;
  private made: UnitRepositories | undefined;
  private readonly notices = new WorkNotices();
  /** Why the unit is spent: its work failed, and what it held is gone. */
  private failed: { cause: unknown } | undefined;
  /** A transaction's work is under way: `begun` is its BEGIN once a repository's method has been called. */
  private inTransaction = false;
  private begun: Promise<void> | undefined;
  private readonly gated = new Map<keyof Repositories, object>();
  private unitDeps: (Repositories & S) | undefined;
  /** Set by `replica`: from then on the §12 reads may go to a replica (outside transactions). */
  private replicaReads = false;
  private readSession: ReadSession | undefined;
  private readonly readOn: ReadOn = (em, work) => {
    if (!this.replicaReads || em.getTransactionContext()) return withDriverConnection(em, work);
    if (this.options.replicas)
      return (this.readSession ??= this.options.replicas.session()).read(work, () => withDriverConnection(em, work));
    this.options.served?.('primary');
    return withDriverConnection(em, work);
  };

  constructor(
    private readonly orm: MikroORM,
    private readonly depsOfUnit: DepsOfUnit<S>,
    private readonly options: UnitOfWorkOptions = {},
    private readonly trace: CurrentTrace = untraced,
  ) {}

  /**
   * Made when first asked for: a unit that is never used (a /trpc context's, before its calls take their own) costs
   * nothing.
   */
  get deps(): Repositories & S {
    this.refuseIfSpent();
    return (this.unitDeps ??= new this.depsOfUnit((name) => this.repository(name)));
  }

  /** The unit's EntityManager and repositories, made on first use. */
  private open(): UnitRepositories {
    this.refuseIfSpent();
    this.fork ??= this.orm.em.fork();
    return (this.made ??= new UnitRepositories(this.fork, this.notices, this.readOn, this.trace));
  }

  /** A repository as the unit's work gets it: each of its methods first begins the transaction under way, if any. */
  private repository<K extends keyof Repositories>(name: K): Repositories[K] {
    const repository = this.open()[name];
    let gated = this.gated.get(name);
    if (!gated) this.gated.set(name, (gated = gate(repository, () => this.beforeStatement())));
    return gated as Repositories[K];
  }

  /** Resolves once a statement may be sent: at once outside a transaction, else after its BEGIN. */
  private beforeStatement(): Promise<void> | undefined {
    this.refuseIfSpent();
    if (!this.inTransaction) return undefined;
    return (this.begun ??= this.fork!.begin().catch((error: unknown) => {
      throw unavailableOr(error);
    }));
  }

  /**
   * Runs work in one transaction: its changes, and the events it emitted, commit together or not at all. A unique
   * index is the backstop for the domain's checks: its violation is a CONFLICT, never a driver error.
   */
  async transaction<T>(work: (deps: Repositories & S) => Promise<T>): Promise<T> {
    const deps = this.deps;
    this.inTransaction = true;
    try {
      const value = await work(deps);
      if (this.begun) {
        await this.begun;
        await this.made!.workDone();
        await commit(this.fork!);
        this.announce();
      } // else the work sent nothing: nothing to commit
      return value;
    } catch (error) {
      // A BEGIN still on its way would open a transaction after the rollback: wait for it first.
      await this.begun?.catch(() => {});
      const em = this.fork;
      if (em?.isInTransaction())
        await em.rollback().catch(() => {
          /* the connection is gone: so is its transaction */
        });
      this.notices.kinds.clear();
      throw this.spend(error);
    } finally {
      this.inTransaction = false;
      this.begun = undefined;
      // A commit or rollback that failed half-way leaves the context behind: nothing may run on it again.
      this.fork?.resetTransactionContext();
    }
  }

  /** Statements, where the reads CONTRACT §12 names may be answered by a replica from now on. */
  replica<T>(work: (deps: Repositories & S) => Promise<T>): Promise<T> {
    this.replicaReads = true;
    return this.statements(work);
  }

  /** Runs work as statements that commit each on its own (reads, and writes of one atomic statement). */
  async statements<T>(work: (deps: Repositories & S) => Promise<T>): Promise<T> {
    this.refuseIfSpent();
    try {
      const value = await work(this.deps);
      await this.made?.workDone();
      return value;
    } catch (error) {
      throw this.spend(error);
    } finally {
      // Each statement committed on its own: what was created stands even when a later one failed.
      this.announce();
    }
  }

  /**
   * After a failure the unit is spent: what it had left to write is dropped and its EntityManager forgets every
   * entity it held (changed ones included), so that nothing of the failed work can be flushed by a later one.
   */
  private spend(error: unknown): unknown {
    this.made?.discardPending();
    this.fork?.clear();
    this.failed = { cause: error };
    return failureOf(error);
  }

  private refuseIfSpent(): void {
    if (this.failed)
      throw new Error('This unit of work is spent: its work failed. Take a new unit for more work.', this.failed);
  }

  private announce() {
    if (this.notices.kinds.size === 0) return;
    this.options.committed?.(new Set(this.notices.kinds));
    this.notices.kinds.clear();
  }
}

const REPOSITORY = Symbol("the unit's repository");
type DepsOfUnit<S extends object> = new (
  repository: <K extends keyof Repositories>(name: K) => Repositories[K],
) => Repositories & S;

/**
 * The class of a unit's dependencies, made once per process: the process's services, and a getter per repository that
 * takes it from the unit when first used (a request that only counts its caller against the limiter builds none), sit
 * on its prototype. Copying the services and defining 13 getters on each unit's own object cost about 35 µs a unit
 * (a microbenchmark; 0.1 µs now). So a spread loses them: to hand on the same with one service replaced, derive from it
 * (`Object.create(deps, { ids: … })`); tests/architecture.test.ts refuses a spread of deps.
 */
function depsOfUnit<S extends object>(services: S): DepsOfUnit<S> {
  class UnitDeps {
    readonly [REPOSITORY]: <K extends keyof Repositories>(name: K) => Repositories[K];
    constructor(repository: <K extends keyof Repositories>(name: K) => Repositories[K]) {
      this[REPOSITORY] = repository;
    }
  }
  Object.assign(UnitDeps.prototype, services);
  for (const name of REPOSITORY_NAMES) {
    Object.defineProperty(UnitDeps.prototype, name, {
      get(this: UnitDeps) {
        return this[REPOSITORY](name);
      },
    });
  }
  return UnitDeps as unknown as DepsOfUnit<S>;
}

/**
 * Commits the EntityManager's transaction. Its flush runs inside an AsyncLocalStorage (MikroORM's UnitOfWork.commit),
 * and the first such run turns on Node's promise hooks for the rest of the process: every promise of every request
 * then pays for them. The repositories leave the EntityManager nothing to flush (SQL on the driver, or the ORM's
 * statements with `DETACHED`: see detached.ts), so its transaction is committed on the connection, as `em.commit` does
 * after its flush; the flush stays for anything that did leave an entity behind.
 */
async function commit(em: EntityManager): Promise<void> {
  const uow = em.getUnitOfWork();
  const nothingToFlush =
    uow.getPersistStack().size === 0 &&
    uow.getRemoveStack().size === 0 &&
    uow.getOrphanRemoveStack().size === 0 &&
    uow.getIdentityMap().keys().length === 0;
  if (!nothingToFlush) return em.commit();
  await em.getConnection('write').commit(em.getTransactionContext()!);
  em.resetTransactionContext();
}

/**
 * Makes units of work on one ORM, each handing its work the process's `services` beside its repositories; `trace`
 * says which trace what the unit writes continues.
 */
export function unitsOfWork<S extends object>(orm: MikroORM, services: S, options: UnitOfWorkOptions = {}) {
  const deps = depsOfUnit(services);
  return (trace?: CurrentTrace) => new MikroOrmUnitOfWork(orm, deps, options, trace);
}

const REPOSITORY_NAMES: readonly (keyof Repositories)[] = [
  'accounts',
  'contacts',
  'webhookConfigs',
  'jobs',
  'partnerOrders',
  'invoices',
  'cancellationReasons',
  'orderMappings',
  'events',
  'eventFeed',
  'commands',
  'commandQueue',
  'deliveryQueue',
  'deliveryLog',
  'operatorSearch',
];

/** A failure as the core knows it: a unique index's violation is a CONFLICT, the database away UNAVAILABLE. */
function failureOf(error: unknown): unknown {
  for (
    let e: unknown = error, depth = 0;
    e instanceof Error && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    // From the ORM's flush, or from SQL run on the driver (23505: unique_violation).
    if (e instanceof UniqueConstraintViolationException || (e as { code?: unknown }).code === '23505') {
      return new DomainError('CONFLICT', 'The change conflicts with existing data.');
    }
  }
  return unavailableOr(error);
}

export type Transact = <T>(work: (repositories: Repositories) => Promise<T>) => Promise<T>;

/** A fresh unit for each piece of work, in a transaction (tests of the repositories, and tools). */
export const mikroOrmTransact = (orm: MikroORM, options: UnitOfWorkOptions = {}): Transact => {
  const unit = unitsOfWork(orm, {}, options);
  return (work) => unit().transaction(work);
};

/** A fresh unit for each piece of work, as statements. */
export const mikroOrmAutocommit = (orm: MikroORM, options: UnitOfWorkOptions = {}): Transact => {
  const unit = unitsOfWork(orm, {}, options);
  return (work) => unit().statements(work);
};
