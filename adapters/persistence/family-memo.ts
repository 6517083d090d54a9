import type { PartnerFamily } from '../../domain/ports.ts';

/**
 * The partner families one unit of work has read (a request's authentication, signature check and use case ask for
 * the caller's in turn, and get it from one read, as the EntityManager's identity map gives entities). What decides a
 * family is accounts and their webhook configurations: saving either in the unit forgets them all.
 */
export class FamilyMemo {
  private readonly families = new Map<string, Promise<PartnerFamily | null>>();

  /** The family as first read in this unit; a read that failed is not kept. */
  get(accountId: string, read: (accountId: string) => Promise<PartnerFamily | null>): Promise<PartnerFamily | null> {
    let family = this.families.get(accountId);
    if (!family) {
      family = read(accountId);
      this.families.set(accountId, family);
      family.catch(() => this.families.delete(accountId));
    }
    return family;
  }

  /** A family read with something else (a partner contact's access): kept unless this unit read it already. */
  prime(accountId: string, family: PartnerFamily): void {
    if (!this.families.has(accountId)) this.families.set(accountId, Promise.resolve(family));
  }

  forget(): void {
    this.families.clear();
  }
}
