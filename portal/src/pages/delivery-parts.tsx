import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../api/client';
import { MutationProblem } from '../ui';

/** What the Redeliver button needs to know of its delivery: its state now, and how many attempts it has. */
type DeliveryState = { id: string; status: 'pending' | 'delivered' | 'failed'; attempts: readonly unknown[] };

/**
 * Sends a delivery again. "Queued" stays only while the delivery has not moved since (the list not reloaded yet) or is
 * pending; once a new attempt settled it (delivered or failed), the delivery's own state says what happened.
 */
export function Redeliver({ delivery }: { delivery: DeliveryState }) {
  const queries = useQueryClient();
  const [queuedAt, setQueuedAt] = useState<number | null>(null);
  const redeliver = useMutation({
    mutationFn: () =>
      call(api.POST('/v3/webhook-deliveries/{id}/redeliver', { params: { path: { id: delivery.id } } })),
    onMutate: () => delivery.attempts.length,
    onSuccess: (_answer, _none, attempts) => {
      setQueuedAt(attempts);
      return queries.invalidateQueries({ queryKey: ['webhook-deliveries'] });
    },
  });
  const queued = queuedAt !== null && (delivery.status === 'pending' || delivery.attempts.length === queuedAt);
  return (
    <span className="redeliver">
      <button
        type="button"
        className="secondary"
        disabled={redeliver.isPending}
        aria-label={`Redeliver ${delivery.id}`}
        onClick={() => redeliver.mutate()}
      >
        Redeliver
      </button>
      {queued && (
        <span role="status" className="muted">
          {' '}
          queued
        </span>
      )}
      <MutationProblem mutation={redeliver} />
    </span>
  );
}

/** An id's first 8 characters, the whole in the tooltip: enough to tell events apart and to find one in a log. */
export const ShortId = ({ id }: { id: string }) => <code title={id}>{id.slice(0, 8)}</code>;
