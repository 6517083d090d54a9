import { z } from 'zod';

// The kinds of value a setting takes (server/config.ts): each parses the environment's text, and its messages name
// what the value must be.

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const toMs = (part: string) => {
  const match = DURATION.exec(part);
  return match ? Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]) : NaN;
};

export const flag = z
  .enum(['1', '0', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');
export const int = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .optional()
    .transform((v) => (v === undefined ? fallback : Number(v)))
    .pipe(z.number().int().min(min).max(max));

export const schedule = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const parts = (value ?? '5s,5m,30m,2h,5h,10h,10h').split(',').map((p) => p.trim());
    const delays = parts.map(toMs);
    if (delays.some((d) => !Number.isFinite(d))) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be comma-separated delays such as 5s,5m,2h (units ms, s, m, h, d)',
      });
      return z.NEVER;
    }
    return delays;
  });

export const duration = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      const ms = toMs((value ?? fallback).trim());
      if (!Number.isFinite(ms) || ms <= 0) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration such as 5d, 12h or 30m (units ms, s, m, h, d)' });
        return z.NEVER;
      }
      return ms;
    });

export const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
  // Messages never repeat the value (the password): a `/`, `#` or `?` left in a password ends the address early, so the
  // URL does not parse or leaves an `@` (and the password's tail) in its path or query.
  .refine(
    (v) => URL.canParse(v) && !/@/.test((({ pathname, search, hash }) => pathname + search + hash)(new URL(v))),
    'is not a URL that can be read; percent-encode reserved characters (such as / # ? @ :) in the user name and password',
  );
