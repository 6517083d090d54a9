/** What the refresh needs of a delivery: whether it is pending, and when its next attempt is due. */
type Settling = { status: string; nextAttemptAt: string | null };

/**
 * Whether a delivery's state is about to change: pending, its next attempt due within a minute either way. One overdue
 * by more than a minute waits for something else (its endpoint disabled or without a URL keeps it as it is, for as
 * long as that lasts): it is not asked after every second.
 */
const settlingSoon = (d: Settling, now: number) => {
  if (d.status !== 'pending') return false;
  if (d.nextAttemptAt === null) return true;
  const dueIn = Date.parse(d.nextAttemptAt) - now;
  return dueIn < 60_000 && dueIn > -60_000;
};

/**
 * A query's refetch interval: every second while one of its deliveries is settling soon (only while the page is seen).
 */
export const refreshWhileSettling = (deliveries: readonly Settling[], now = Date.now()) =>
  deliveries.some((d) => settlingSoon(d, now)) ? 1000 : false;
