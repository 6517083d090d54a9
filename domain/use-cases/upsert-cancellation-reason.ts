import { type CancellationOutcome, CancellationReason } from '../cancellation.ts';
import { invalid } from '../errors.ts';
import type { Deps } from '../ports.ts';

export async function upsertCancellationReason(
  deps: Pick<Deps, 'cancellationReasons'>,
  input: { name: string; outcome: CancellationOutcome },
): Promise<void> {
  const name = input.name.trim();
  if (!/^[A-Z][A-Z0-9_]{0,63}$/.test(name))
    throw invalid('name', 'A reason name is UPPER_SNAKE_CASE, 64 characters at most.');
  await deps.cancellationReasons.save(new CancellationReason(name, input.outcome));
}
