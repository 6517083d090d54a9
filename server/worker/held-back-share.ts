import type { ClaimedDelivery } from '../../domain/delivery.ts';
import type { HeldBackEndpoints } from './held-back-endpoints.ts';

/** What a held-back endpoint may hold: one send under way and one delivery waiting for it. */
const HOLDS = 2;

/**
 * One delivery round's share for held-back endpoints (held-back-endpoints.ts): one send and one delivery waiting each,
 * and together at most half the round's sends (one at least) and as many waiting. `held` is what the round holds
 * by endpoint, sends under way and deliveries waiting alike.
 */
export class HeldBackShare {
  /** Sends under way to endpoints that were held back when each began. */
  private sending = 0;
  /** The sends held-back endpoints may have together. */
  private readonly sends: number;

  constructor(
    private readonly endpoints: HeldBackEndpoints,
    maxInFlight: number,
    private readonly held: ReadonlyMap<string, number>,
  ) {
    this.sends = Math.max(1, Math.floor(maxInFlight / 2));
  }

  /** Whether a send to the endpoint fits, given its own under way and the share it has when not held back. */
  fits(endpointId: string, sendingToIt: number, perEndpoint: number): boolean {
    if (!this.endpoints.isHeldBack(endpointId)) return sendingToIt < perEndpoint;
    return sendingToIt === 0 && this.sending < this.sends;
  }

  /** A send begins: answers its end, to call once it has ended. */
  began(endpointId: string): () => void {
    if (!this.endpoints.isHeldBack(endpointId)) return () => {};
    this.sending++;
    return () => {
      this.sending--;
    };
  }

  /**
   * What a claim at `now` (epoch ms) is told the round holds: held-back endpoints have room for what they may hold, in
   * turns, until together they would hold twice their share of sends; no room past that. `perEndpoint` is what the
   * claim lets any endpoint hold.
   */
  told(perEndpoint: number, now: number): ReadonlyMap<string, number> {
    const inTurns = this.endpoints.inTurns(now);
    if (inTurns.length === 0) return this.held;
    let places = 2 * this.sends - this.holding();
    const told = new Map(this.held);
    let turns = 0;
    for (const [i, endpointId] of inTurns.entries()) {
      const room = Math.max(0, Math.min(HOLDS - (this.held.get(endpointId) ?? 0), places));
      places -= room;
      if (room > 0) turns = i + 1;
      told.set(endpointId, perEndpoint - room);
    }
    // The next claim starts after the last endpoint given room, so that every one has its turn, round after round.
    this.endpoints.tookTurns(turns);
    return told;
  }

  /**
   * Learns from claimed deliveries what their claim read of their endpoints (at `now`, epoch ms), and splits them:
   * those to keep, and those of held-back endpoints past what they may hold, to give back. The endpoints told room
   * come first; those the claim found failing before this process knew it take what is left.
   */
  admit(claimed: readonly ClaimedDelivery[], now: number): { kept: ClaimedDelivery[]; excess: ClaimedDelivery[] } {
    const toldRoom = new Set(this.endpoints.heldBack());
    for (const delivery of claimed) this.endpoints.claimed(delivery, now);
    let holding = this.holding();
    const taken = new Map<string, number>();
    const excess = new Set<ClaimedDelivery>();
    for (const first of [true, false]) {
      for (const delivery of claimed) {
        const { endpointId } = delivery;
        if (!this.endpoints.isHeldBack(endpointId) || toldRoom.has(endpointId) !== first) continue;
        const holds = (this.held.get(endpointId) ?? 0) + (taken.get(endpointId) ?? 0);
        if (holds >= HOLDS || holding >= 2 * this.sends) {
          excess.add(delivery);
          continue;
        }
        holding++;
        taken.set(endpointId, (taken.get(endpointId) ?? 0) + 1);
      }
    }
    return { kept: claimed.filter((d) => !excess.has(d)), excess: [...excess] };
  }

  private holding() {
    let holding = 0;
    for (const endpointId of this.endpoints.heldBack()) holding += this.held.get(endpointId) ?? 0;
    return holding;
  }
}
