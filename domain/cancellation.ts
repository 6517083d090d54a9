export type CancellationOutcome = 'cancelled' | 'pending';
export const CANCELLATION_OUTCOMES: readonly CancellationOutcome[] = ['cancelled', 'pending'];

export class CancellationReason {
  constructor(
    public name: string,
    public outcome: CancellationOutcome,
  ) {}
}

/** Seeded on every new database (CONTRACT §2). */
export const SEEDED_CANCELLATION_REASONS: readonly CancellationReason[] = [
  new CancellationReason('CUSTOMER_WITHDREW', 'cancelled'),
  new CancellationReason('DUPLICATE_ORDER', 'cancelled'),
  new CancellationReason('OUTSIDE_SERVICE_AREA', 'cancelled'),
  new CancellationReason('CUSTOMER_UNREACHABLE', 'pending'),
  new CancellationReason('TECHNICAL_INFEASIBILITY', 'pending'),
];
