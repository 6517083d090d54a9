import type { MailMessage, TokenClaims, TokenKind } from '../../domain/auth.ts';
import type {
  Clock,
  Deferrer,
  Deps,
  IdGenerator,
  KeyMaker,
  LoginRateLimiter,
  Mailer,
  RateLimiter,
  TokenService,
  WebhookTargetPolicy,
} from '../../domain/ports.ts';

export class FixedClock implements Clock {
  constructor(private current = new Date('2026-11-22T12:00:00.000Z')) {}
  now() {
    return new Date(this.current);
  }
  advance(seconds: number) {
    this.current = new Date(this.current.getTime() + seconds * 1000);
  }
}

export class SequentialIds implements IdGenerator {
  private n = 0;
  newId() {
    return `00000000-0000-4000-8000-${String(++this.n).padStart(12, '0')}`;
  }
}

export const allowAllTargets: WebhookTargetPolicy = { refusalReason: async () => null };

/**
 * Keys numbered as they are made: `whsec_` keys of the right shape, and key pairs whose private half names its public
 * one.
 */
export class SequentialKeys implements KeyMaker {
  private n = 0;
  newSecretKey() {
    return `whsec_${Buffer.from(`secret-key-${++this.n}`.padEnd(32, '.')).toString('base64')}`;
  }
  newKeyPair() {
    const n = ++this.n;
    return { privateKey: `private-key-${n}`, publicKey: `whpk_public-key-${n}` };
  }
}

/** Tokens as opaque strings remembered in memory, honouring kind and expiry like the real service. */
export class InMemoryTokenService implements TokenService {
  private readonly issued = new Map<string, { kind: TokenKind; claims: TokenClaims; expiresAt: number }>();
  private n = 0;
  async issue(kind: TokenKind, claims: TokenClaims, issuedAt: Date, lifetimeSeconds: number) {
    const token = `${kind}-token-${++this.n}`;
    this.issued.set(token, { kind, claims: { ...claims }, expiresAt: issuedAt.getTime() + lifetimeSeconds * 1000 });
    return token;
  }
  async verify(kind: TokenKind, token: string, now: Date) {
    const entry = this.issued.get(token);
    return entry && entry.kind === kind && now.getTime() < entry.expiresAt ? { ...entry.claims } : null;
  }
}

export class RecordingMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage) {
    this.sent.push(message);
  }
}

export class CountingLoginLimiter implements LoginRateLimiter {
  private readonly counts = new Map<string, number>();
  constructor(
    private readonly perEmail = 5,
    private readonly perAddress = 30,
  ) {}
  async consume(email: string, clientAddress: string) {
    const e = (this.counts.get(`e:${email}`) ?? 0) + 1;
    const a = (this.counts.get(`a:${clientAddress}`) ?? 0) + 1;
    this.counts.set(`e:${email}`, e).set(`a:${clientAddress}`, a);
    return e > this.perEmail || a > this.perAddress ? 60 : null;
  }
}

export class CountingRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, number>();
  constructor(private readonly points = 10) {}
  async consume(key: string) {
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n > this.points ? 60 : null;
  }
  peek(key: string) {
    return (this.counts.get(key) ?? 0) > this.points ? 60 : null;
  }
}

/** Holds deferred work until `runAll`, so tests can tell what happens before and after the answer. */
export class QueuedDeferrer implements Deferrer {
  readonly queued: { name: string; work: (deps: Deps) => Promise<void> }[] = [];
  defer(name: string, work: (deps: Deps) => Promise<void>) {
    this.queued.push({ name, work });
  }
  async runAll(deps: Deps) {
    for (const { work } of this.queued.splice(0)) await work(deps);
  }
}
