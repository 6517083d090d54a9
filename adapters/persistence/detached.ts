/**
 * How the repositories mapped by the ORM read and write: each call in a fork of its own that shares the unit's
 * transaction and is cleared after it (MikroORM's `disableIdentityMap`), and writes as one statement at once (`upsert`)
 * rather than at a flush. The unit's EntityManager so holds no entity and never flushes: MikroORM runs a flush inside
 * an AsyncLocalStorage, and the first such run turns Node's promise hooks on for the rest of the process, which cost
 * every later request 16-19 % more CPU (POST /v3/commands and GET /v3/commands/{cid}, a process after one login against
 * one without, alternating rounds). Entities read so are the caller's to change and save; a save writes every column.
 */
export const DETACHED = { disableIdentityMap: true } as const;

/**
 * What a unit read by primary key, each read sent once per unit, as the identity map answered a repeat before (a batch
 * of brand commands reads the same reason, mapping or invoice for each command); a save forgets its key.
 */
export class UnitReads<T> {
  private readonly held = new Map<string, Promise<T | null>>();

  get(key: string, read: () => Promise<T | null>): Promise<T | null> {
    return heldOrRead(this.held, key, read);
  }

  forget(key: string): void {
    this.held.delete(key);
  }

  /** A save of `key`: see forgettingAround. */
  writing<R>(key: string, write: () => Promise<R>): Promise<R> {
    return forgettingAround(() => this.forget(key), write);
  }
}

/**
 * What `held` holds under `key`, or `read()`, held there from now on. A read that fails is not kept (the next asks
 * again), and removes only itself: a save since may have let a newer read take its place.
 */
export function heldOrRead<T>(held: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
  const found = held.get(key);
  if (found) return found;
  const reading = read();
  held.set(key, reading);
  reading.catch(() => held.get(key) === reading && held.delete(key));
  return reading;
}

/** Forgets what a unit read before a write and after it: a read that began while it was under way may hold the old. */
export async function forgettingAround<R>(forget: () => void, write: () => Promise<R>): Promise<R> {
  forget();
  try {
    return await write();
  } finally {
    forget();
  }
}
