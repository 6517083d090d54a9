/** How many deaths within the window make the primary give a role up. */
const GIVE_UP_AFTER = 5;
const WINDOW_MS = 60_000;
const FIRST_DELAY_MS = 1000;

/**
 * When to fork again a process that died: 1 s after a first death, doubling with each death of its role within the
 * last minute (1, 2, 4, 8 s); null at the fifth within a minute, when restarting only repeats a failure.
 */
export function restartPolicy() {
  const deaths = new Map<string, number[]>();
  return {
    died(role: string, now: number): number | null {
      const recent = (deaths.get(role) ?? []).filter((at) => now - at < WINDOW_MS);
      recent.push(now);
      deaths.set(role, recent);
      if (recent.length >= GIVE_UP_AFTER) return null;
      return FIRST_DELAY_MS * 2 ** (recent.length - 1);
    },
  };
}

export const RESTART_LIMIT = { deaths: GIVE_UP_AFTER, windowMs: WINDOW_MS } as const;
