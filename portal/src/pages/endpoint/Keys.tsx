import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, call } from '../../api/client';
import type { operations } from '../../api/schema';
import { formatUtc } from '../../dates';
import { CopyField, MutationProblem } from '../../ui';
import { CONFIG_KEY, type Config, FieldIssues } from './config';

const formatHours = (seconds: number) => (seconds === 3600 ? '1 hour' : `${+(seconds / 3600).toFixed(2)} hours`);

type Rotate = NonNullable<operations['webhookConfig-rotateKey']['requestBody']>['content']['application/json'];

/**
 * The endpoint's keys: a shared key made by the service (shown once) or one of the integrator's own, and, while
 * asymmetric signatures are on, the public key to copy and a new pair. A rotation keeps the previous key (or pair)
 * valid for the hours given, so that a receiver can switch without losing a webhook.
 */
export function Keys({ config }: { config: Config }) {
  const [hours, setHours] = useState('24');
  const [ownKey, setOwnKey] = useState('');
  const [done, setDone] = useState<{ text: string; key?: string } | null>(null);
  const queries = useQueryClient();
  const rotate = useMutation({
    // Not kept in the mutation cache after the page is left: its answer may hold a key shown once, its input your own.
    gcTime: 0,
    mutationFn: (body: Rotate) => call(api.POST('/v3/webhook-config/rotate-key', { body })),
    onMutate: () => setDone(null),
    onSuccess: (answer, body) => {
      if (body.asymmetric) {
        // The previous pair's end is not in the answer (CONTRACT §11 shows only its key): said from the hours asked.
        setDone({
          text: answer.previousPublicKey
            ? `A new key pair: webhooks are signed with both pairs for ${formatHours(body.previousKeyValidFor ?? 86_400)}; copy the new public key below.`
            : 'A new key pair: copy its public key below; the previous pair is no longer valid.',
        });
      } else {
        const until = answer.previousKeyExpiresAt;
        const window = until
          ? `webhooks are signed with both keys until ${formatUtc(until)}.`
          : 'the previous key is no longer valid.';
        if (body.signatureKey) setDone({ text: `Rotated: ${window}` });
        else
          setDone({
            text: `A new key was made: ${config.hasSignatureKey ? window : 'webhooks are signed with it now.'}`,
            key: answer.signatureKey,
          });
      }
      setOwnKey('');
      return queries.invalidateQueries({ queryKey: CONFIG_KEY });
    },
  });
  const issues = rotate.error?.issues ?? [];
  // An emptied field is no window of 0 (which would end the current key at once): it is asked for.
  const [hoursChecked, setHoursChecked] = useState(false);
  const hoursValid =
    hours.trim() !== '' && Number.isFinite(Number(hours)) && Number(hours) >= 0 && Number(hours) <= 168;
  const previousKeyValidFor = Math.round(Number(hours) * 3600);
  const rotateWith = (body: Rotate) => {
    setHoursChecked(true);
    if ('previousKeyValidFor' in body && !hoursValid) {
      document.getElementById('overlap')?.focus();
      return;
    }
    rotate.mutate(body);
  };
  const ownKeySubmit = (e: FormEvent) => {
    e.preventDefault();
    rotateWith({ signatureKey: ownKey, previousKeyValidFor });
  };

  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">{config.hasSignatureKey ? 'Rotate the signature key' : 'Signature key'}</h2>
      <p className="muted">
        {config.hasSignatureKey
          ? 'Your receiver can verify with either key while both are valid; switch it to the new key within that window.'
          : 'Without a key, webhooks carry no shared-key signature (v1). Let the service make one: it is shown once.'}
      </p>
      {(config.hasSignatureKey || config.publicKey) && (
        <>
          <label htmlFor="overlap">Keep the current key{config.publicKey ? ' (or pair)' : ''} valid for (hours)</label>
          <input
            id="overlap"
            type="number"
            min="0"
            max="168"
            step="any"
            value={hours}
            onChange={(e) => setHours(e.target.value)}
            aria-invalid={hoursChecked && !hoursValid}
            aria-describedby={hoursChecked && !hoursValid ? 'overlap-issue' : undefined}
          />
          {hoursChecked && !hoursValid && (
            <p className="issue" id="overlap-issue">
              Enter the hours, 0 to 168 (0 ends the current key at once).
            </p>
          )}
          <FieldIssues issues={issues} field="previousKeyValidFor" />
        </>
      )}
      <div className="buttons">
        <button
          type="button"
          disabled={rotate.isPending}
          onClick={() => rotateWith(config.hasSignatureKey ? { previousKeyValidFor } : {})}
        >
          {config.hasSignatureKey ? 'Generate a new key' : 'Generate a key'}
        </button>
      </div>
      {done && (
        <div data-testid="key-result">
          <p role="status">{done.text}</p>
          {done.key && (
            <>
              <CopyField id="generated-key" label="Your new signature key: shown this once" value={done.key} />
              <p className="muted">Store it with your receiver now; the portal cannot show it again.</p>
            </>
          )}
        </div>
      )}
      {config.hasSignatureKey && (
        <form onSubmit={ownKeySubmit} aria-label="Rotate to a key of your own" noValidate>
          <label htmlFor="newKey">New key (16 characters or more)</label>
          <input
            id="newKey"
            type="password"
            autoComplete="off"
            value={ownKey}
            onChange={(e) => setOwnKey(e.target.value)}
            aria-describedby={issues.some((i) => i.path === 'signatureKey') ? 'rotate-signatureKey-issue' : undefined}
          />
          <FieldIssues issues={issues} field="signatureKey" idPrefix="rotate-" />
          <button type="submit" className="secondary" disabled={rotate.isPending}>
            Rotate the key
          </button>
        </form>
      )}
      {config.asymmetricSigning && config.publicKey && (
        <div className="public-keys">
          <h3>Public key (v1a)</h3>
          <CopyField id="public-key" label="Verify v1a signatures with" value={config.publicKey} />
          {config.previousPublicKey && (
            <CopyField
              id="previous-public-key"
              label="The previous public key (it signs too until the window you chose ends)"
              value={config.previousPublicKey}
            />
          )}
          <button
            type="button"
            className="secondary"
            disabled={rotate.isPending}
            onClick={() => rotateWith({ asymmetric: true, previousKeyValidFor })}
          >
            Make a new key pair
          </button>
        </div>
      )}
      <MutationProblem mutation={rotate} />
    </section>
  );
}
