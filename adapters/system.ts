import { randomUUID } from 'node:crypto';
import type { Clock, IdGenerator } from '../domain/ports.ts';

export const systemClock: Clock = { now: () => new Date() };

/** The clock of test environments (TEST_CLOCK=1): real time plus an offset that only moves forward. */
export class AdjustableClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(seconds: number): Date {
    this.offsetMs += seconds * 1000;
    return this.now();
  }
}

export const randomIds: IdGenerator = { newId: () => randomUUID() };
