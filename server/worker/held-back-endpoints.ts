import type { ClaimedDelivery, DeliveryAttempt } from '../../domain/delivery.ts';

/** How long what a process learnt of an endpoint counts when nothing newer came (a claim tells it again). */
const REMEMBERED_MS = 10 * 60_000;

/** What a process knows of one endpoint (epoch ms). */
interface Standing {
  /** Its URL when last heard of, for the log. */
  url: string | null;
  /** This process's newest attempt to it got no 2xx, or a slow one. */
  slowOrFailing: boolean;
  /** When this process's newest 2xx in time to it began. */
  okAt: number;
  /** Its `failingSince` as the newest claim read it (§11), or null. */
  failingSince: number | null;
  /** When the newest of these came. */
  newsAt: number;
}

/**
 * The endpoints a process sends to one at a time: a circuit breaker, as Svix and Hook0 keep one (CONTRACT §7: no
 * endpoint slows another). An endpoint is held back:
 * - while this process's newest attempt to it got no 2xx, or took `slowMs` or more; only a 2xx in time from this
 *   process ends that (a claim that reads the endpoint healthy may have read it before this process's record);
 * - while it is failing as a claim read it (§11's `failingSince`, set by any process), unless this process had a 2xx
 *   in time from it since it began failing; a claim that reads it healthy ends this.
 * An endpoint that is disabled or has no URL is never held back: no claim hands out its deliveries.
 *
 * The round (delivery-round.ts, held-back-share.ts) gives a held-back endpoint one send and one delivery waiting, and
 * all of them together at most half its sends, in turns that go on from round to round. Retries keep their schedule:
 * an attempt only ever comes later than its delay. The process keeps this across rounds, tells `changed` each time an
 * endpoint is held back or let go (forgotten included), and forgets an endpoint 10 to 20 minutes after its last news
 * (its next claim tells again).
 */
export class HeldBackEndpoints {
  private readonly known = new Map<string, Standing>();
  private readonly held = new Set<string>();
  private sweptAt = 0;
  /** Where the next turn starts among the endpoints held back. */
  private turn = 0;

  constructor(
    private readonly slowMs: number,
    private readonly changed: (endpoint: { id: string; url: string | null }, heldBack: boolean) => void = () => {},
  ) {}

  /** What a claim read of the delivery's endpoint, at `at` (epoch ms). */
  claimed(delivery: ClaimedDelivery, at: number): void {
    const standing = this.standing(delivery, at);
    const { endpoint } = delivery;
    const sendsNothing = !endpoint?.url || !endpoint.enabled;
    standing.failingSince = sendsNothing ? null : (endpoint.failingSince?.getTime() ?? null);
    if (sendsNothing) standing.slowOrFailing = false;
    this.judge(delivery.endpointId, standing);
  }

  /** What an attempt sent to the delivery's endpoint showed, once it finished. */
  attempted(delivery: ClaimedDelivery, attempt: Pick<DeliveryAttempt, 'at' | 'statusCode' | 'durationMs'>): void {
    const begun = attempt.at.getTime();
    const standing = this.standing(delivery, begun + attempt.durationMs);
    const ok = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode <= 299;
    standing.slowOrFailing = !ok || attempt.durationMs >= this.slowMs;
    if (!standing.slowOrFailing) standing.okAt = Math.max(standing.okAt, begun);
    this.judge(delivery.endpointId, standing);
  }

  isHeldBack(endpointId: string): boolean {
    return this.held.has(endpointId);
  }

  /** The endpoints held back now. */
  heldBack(): ReadonlySet<string> {
    return this.held;
  }

  /** The endpoints held back at `now` (epoch ms), the one whose turn it is first. */
  inTurns(now: number): string[] {
    this.sweep(now);
    const all = [...this.held];
    const first = all.length === 0 ? 0 : this.turn % all.length;
    return [...all.slice(first), ...all.slice(0, first)];
  }

  /** The first `count` of `inTurns` had their turn: the next one starts after them. */
  tookTurns(count: number): void {
    this.turn += count;
  }

  private standing(delivery: ClaimedDelivery, at: number): Standing {
    this.sweep(at);
    let standing = this.known.get(delivery.endpointId);
    if (!standing) {
      standing = { url: null, slowOrFailing: false, okAt: -Infinity, failingSince: null, newsAt: at };
      this.known.set(delivery.endpointId, standing);
    }
    standing.url = delivery.endpoint?.url ?? null;
    standing.newsAt = Math.max(standing.newsAt, at);
    return standing;
  }

  private judge(endpointId: string, standing: Standing) {
    const heldBack =
      standing.slowOrFailing || (standing.failingSince !== null && standing.failingSince > standing.okAt);
    if (heldBack === this.held.has(endpointId)) return;
    if (heldBack) this.held.add(endpointId);
    else this.held.delete(endpointId);
    this.changed({ id: endpointId, url: standing.url }, heldBack);
  }

  private sweep(at: number) {
    if (at - this.sweptAt < REMEMBERED_MS) return;
    this.sweptAt = at;
    for (const [endpointId, { newsAt, url }] of this.known) {
      if (at - newsAt <= REMEMBERED_MS) continue;
      this.known.delete(endpointId);
      if (this.held.delete(endpointId)) this.changed({ id: endpointId, url }, false);
    }
  }
}
