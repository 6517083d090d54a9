import { useState } from 'react';
import { api, call } from '../api/client';
import { ProblemBox, useAction } from '../ui';

/** What the Redeliver button needs to know of its delivery: its state now, and how many attempts it has. */
export type DeliveryState = { id: string; status: 'pending' | 'delivered' | 'failed'; attempts: readonly unknown[] };

/**
 * Sends a delivery again. "Queued" stays only while the delivery has not moved since (the list not reloaded yet) or is
 * pending; once a new attempt settled it (delivered or failed), the delivery's own state says what happened.
 */
export function Redeliver({ delivery, onDone }: { delivery: DeliveryState; onDone: () => void }) {
  const action = useAction();
  const [queuedAt, setQueuedAt] = useState<number | null>(null);
  const queued = queuedAt !== null && (delivery.status === 'pending' || delivery.attempts.length === queuedAt);
  return (
    <span className="redeliver">
      <button type="button" className="secondary" disabled={action.busy} aria-label={`Redeliver ${delivery.id}`}
        onClick={() => void action.run(async () => {
          const attempts = delivery.attempts.length;
          await call(api.POST('/v3/webhook-deliveries/{id}/redeliver', { params: { path: { id: delivery.id } } }));
          setQueuedAt(attempts);
          onDone();
        })}>Redeliver</button>
      {queued && <span role="status" className="muted"> queued</span>}
      {action.problem && <ProblemBox problem={action.problem} />}
    </span>
  );
}

/** Whether a delivery's state is about to change (pending, its next attempt within a minute): worth asking again soon. */
export const settlingSoon = (d: { status: string; nextAttemptAt: string | null }) =>
  d.status === 'pending' && (d.nextAttemptAt === null || Date.parse(d.nextAttemptAt) - Date.now() < 60_000);

/**
 * The order a delivery's event is about. The API adds `orderId` to each delivery (CONTRACT §10); until the document
 * describes it, it is read when the answer has it, and the column shows "—" otherwise.
 */
export const orderOf = (d: object): string | null => {
  const value = (d as { orderId?: unknown }).orderId;
  return typeof value === 'string' && value ? value : null;
};

/** An id's first 8 characters, the whole in the tooltip: enough to tell events apart and to find one in a log. */
export const ShortId = ({ id }: { id: string }) => <code title={id}>{id.slice(0, 8)}</code>;
