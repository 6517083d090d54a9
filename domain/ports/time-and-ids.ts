// Time and ids, injected so that tests (and TEST_CLOCK=1) decide them.

export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  /** A new random UUID. */
  newId(): string;
}
