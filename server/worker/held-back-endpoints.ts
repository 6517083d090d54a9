import type { ClaimedDelivery, DeliveryAttempt } from '../../domain/delivery.ts';

/** How long what a process learnt of an endpoint counts when nothing newer came: a claim tells it again. */
const REMEMBERED_MS = 10 * 60_000;

/**
 * The endpoints a process sends to one at a time: a circuit breaker, as Svix and Hook0 keep one (CONTRACT §7: no
 * endpoint slows another). An endpoint is held back while it is failing (§11: no 2xx since its last 2xx, as a claim
 * read it), or while this process's newest attempt to it got no 2xx or took `slowMs` or more. An attempt answered 2xx
 * in time gives it its whole share back at once. The round (delivery-round.ts) lets a held-back endpoint have one send
 * and one delivery waiting, and all of them together at most half its sends: however many endpoints hang, the other
 * half goes to the rest. Retries keep their schedule, since an attempt only ever comes later than its delay.
 *
 * The process keeps it across rounds; what it learnt of an endpoint is forgotten after REMEMBERED_MS without news.
 */
export class HeldBackEndpoints {
  /** When the newest news of each endpoint came (epoch ms): older news never overrides it. */
  private readonly newsAt = new Map<string, number>();
  private readonly held = new Set<string>();
  private sweptAt = 0;

  constructor(private readonly slowMs: number) {}

  /** What a claim read of the endpoint, at `at` (epoch ms). */
  claimed(delivery: ClaimedDelivery, at: number): void {
    this.learn(delivery.endpointId, delivery.endpoint?.failingSince != null, at);
  }

  /** What an attempt to the endpoint showed once it finished; answers whether that changed the endpoint's standing. */
  attempted(endpointId: string, attempt: Pick<DeliveryAttempt, 'at' | 'statusCode' | 'durationMs'>): boolean {
    const ok = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode <= 299;
    const was = this.held.has(endpointId);
    this.learn(endpointId, !ok || attempt.durationMs >= this.slowMs, attempt.at.getTime() + attempt.durationMs);
    return this.held.has(endpointId) !== was;
  }

  isHeldBack(endpointId: string): boolean {
    return this.held.has(endpointId);
  }

  /** The endpoints held back now. */
  heldBack(): ReadonlySet<string> {
    return this.held;
  }

  private learn(endpointId: string, heldBack: boolean, at: number) {
    if ((this.newsAt.get(endpointId) ?? -Infinity) > at) return;
    this.newsAt.set(endpointId, at);
    if (heldBack) this.held.add(endpointId);
    else this.held.delete(endpointId);
    if (at - this.sweptAt < REMEMBERED_MS) return;
    this.sweptAt = at;
    for (const [id, newsAt] of this.newsAt) {
      if (at - newsAt <= REMEMBERED_MS) continue;
      this.newsAt.delete(id);
      this.held.delete(id);
    }
  }
}
