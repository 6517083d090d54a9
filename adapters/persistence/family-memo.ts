import type { PartnerFamily } from '../../domain/ports.ts';
import { forgettingAround, heldOrRead } from './detached.ts';

/**
 * The partner families one unit of work has read (a request's authentication, signature check and use case ask for
 * the caller's in turn, and get it from one read, as the EntityManager's identity map gives entities). What decides a
 * family is accounts and their webhook configurations: saving either in the unit forgets them all.
 */
export class FamilyMemo {
  private readonly families = new Map<string, Promise<PartnerFamily | null>>();
  /** How many times the memo was emptied: a family read before a save must not come back after it. */
  private forgotten = 0;

  /** The family as first read in this unit; a read that failed is not kept. */
  get(accountId: string, read: (accountId: string) => Promise<PartnerFamily | null>): Promise<PartnerFamily | null> {
    return heldOrRead(this.families, accountId, () => read(accountId));
  }

  /** Taken before a read whose family is then `prime`d: the read's place among the unit's saves. */
  readStarts(): number {
    return this.forgotten;
  }

  /**
   * A family read with something else (a partner contact's access), kept unless this unit read it already or forgot
   * its families since that read began (`readStarted`, from readStarts).
   */
  prime(accountId: string, family: PartnerFamily, readStarted: number): void {
    if (readStarted === this.forgotten && !this.families.has(accountId))
      this.families.set(accountId, Promise.resolve(family));
  }

  forget(): void {
    this.forgotten++;
    this.families.clear();
  }

  /** A save: see forgettingAround. */
  writing<R>(write: () => Promise<R>): Promise<R> {
    return forgettingAround(() => this.forget(), write);
  }
}
