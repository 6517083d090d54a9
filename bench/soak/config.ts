// The soak's settings (SOAK_* in the environment; see index.ts), its targets, and what every part of it shares.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const env = process.env;
const num = (name: string, fallback: number) => {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
export const DATABASE_URL = env.DATABASE_URL;
export const EMBEDDED = env.SOAK_EMBEDDED === '1' || !DATABASE_URL;
export const SECONDS = num('SOAK_SECONDS', 300);
export const RATE = num('SOAK_RATE', 100);
export const WARMUP_SECONDS = num('SOAK_WARMUP_SECONDS', 20);
export const FAIRNESS_SECONDS = num('SOAK_FAIRNESS_SECONDS', 30);
// Alone and under the paced noise, alternately, this many times; judged on the median round. The machine's own slow
// moments (its disk stalling for a second, every commit waiting on it) fall on one phase or the other at random, and
// one such second in one phase moves that phase's p99 tenfold: the median round is the noisy tenant's effect.
export const FAIRNESS_ROUNDS = num('SOAK_FAIRNESS_ROUNDS', 5);
export const QUIET_RATE = num('SOAK_QUIET_RATE', 20);
export const NOISE_CONNECTIONS = num('SOAK_NOISE_CONNECTIONS', 32);
// The noisy tenant's pace in the judged part of the fairness phase: 20× its share (API_RATE_LIMIT_PER_ACCOUNT, 50/s).
export const NOISE_RATE = num('SOAK_NOISE_RATE', 1000);
export const BURSTS = num('SOAK_BURSTS', 3);
export const BURST_SECONDS = num('SOAK_BURST_SECONDS', 60);
export const IDLE_SECONDS = num('SOAK_IDLE_SECONDS', 60);
export const EMBEDDED_RATE = num('SOAK_EMBEDDED_RATE', 30);
export const JOBS = num('SOAK_JOBS', 40);
export const DRAIN_TIMEOUT_SECONDS = num('SOAK_DRAIN_TIMEOUT_SECONDS', 180);
export const NO_WRITE = env.SOAK_NO_WRITE === '1';
/** An account is kept at this many requests a second at most: well under its share of 50/s (a fixed 1 s window). */
export const PER_ACCOUNT_CAP = 20;
export const RSS_GROWTH_TARGET = 10;
export const FAIRNESS_TARGET = 2;

export const root = join(import.meta.dirname, '..', '..');
export const ADMIN = 'bench-admin-token-0123456789';
export const tag = randomUUID().slice(0, 8);
export const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-soak-'));
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const since = (t0: number) => ((performance.now() - t0) / 1000).toFixed(0);
/**
 * The time some task of the machine waited on the disk so far (Linux's /proc/pressure/io, "some"), in ms; NaN where
 * it is not kept. A commit waits for its WAL's flush, so while the disk stalls, every write waits too.
 */
export const diskStallMs = () => {
  try {
    return Number(/some .*total=(\d+)/.exec(readFileSync('/proc/pressure/io', 'utf8'))![1]) / 1000;
  } catch {
    return NaN;
  }
};

/** The machine's load average over the last minute (other users of the machine included). */
export const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
