import type { KeyMaker, RequestSignatures, TokenService } from './ports/credentials.ts';
import type { LoginRateLimiter, RateLimiter, StreamSlots } from './ports/limits.ts';
import type { Links, Mailer, WebhookSender, WebhookTargetPolicy } from './ports/messaging.ts';
import type { Repositories } from './ports/repositories.ts';
import type { Clock, IdGenerator } from './ports/time-and-ids.ts';

export type * from './ports/commands.ts';
export type * from './ports/credentials.ts';
export type * from './ports/events.ts';
export type * from './ports/limits.ts';
export type * from './ports/messaging.ts';
export type * from './ports/operators.ts';
// The core's ports, one file a job (domain/ports/), re-exported here; and what a use case is handed, by name.
export type * from './ports/repositories.ts';
export type * from './ports/time-and-ids.ts';

export interface Deferrer {
  /**
   * Runs work after the current request has been answered, in a unit of work of its own. Failures are
   * logged, never shown to the caller; shutdown waits for work under way.
   */
  defer(name: string, work: (deps: Deps) => Promise<void>): void;
}

/** What lives as long as the process, shared by every unit of work: time, ids, tokens, limits, mail, the sender. */
export interface ProcessServices {
  clock: Clock;
  ids: IdGenerator;
  webhookTargets: WebhookTargetPolicy;
  tokens: TokenService;
  mailer: Mailer;
  links: Links;
  loginLimiter: LoginRateLimiter;
  /** Endpoint tests per account (CONTRACT §10: 10 a minute). */
  endpointTestLimiter: RateLimiter;
  /** Authenticated requests per account and second (CONTRACT §1, `API_RATE_LIMIT_PER_ACCOUNT`). */
  requestLimiter: RateLimiter;
  streamSlots: StreamSlots;
  deferrer: Deferrer;
  signatures: RequestSignatures;
  keys: KeyMaker;
  webhookSender: WebhookSender;
}

/**
 * The collaborators a use case may be handed, by name (`Pick<Deps, 'jobs' | 'clock'>`): the repositories of the unit
 * of work it runs in, and the process's services. A unit's may hold them on its prototype: to replace one, derive
 * (`Object.create(deps, …)`), never spread.
 */
export type Deps = Repositories & ProcessServices;
