import type { UseQueryResult } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import type { Problem } from './api/session';

/** The service's problem: its detail, and the request id to quote. */
export function ProblemBox({ problem }: { problem: Problem }) {
  return (
    <div className="problem" role="alert">
      <p>{problem.detail}</p>
      {problem.requestId && (
        <p className="muted">
          Request id: <code>{problem.requestId}</code>
        </p>
      )}
    </div>
  );
}

export function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** Loading, failure and content of a query in one place. */
export function Loaded<T>({
  query,
  children,
}: {
  query: UseQueryResult<T, Problem>;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading />;
  if (query.data === undefined) return <ProblemBox problem={query.error!} />;
  // A refetch that failed keeps what is shown (a form being filled, a key shown once), with the problem above it.
  return (
    <>
      {query.isError && <ProblemBox problem={query.error} />}
      {children(query.data)}
    </>
  );
}

/** A mutation's problem, when its last run failed. */
export function MutationProblem({ mutation }: { mutation: { error: Problem | null } }) {
  return mutation.error ? <ProblemBox problem={mutation.error} /> : null;
}

export function Json({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === 'string' ? pretty(value) : JSON.stringify(value, null, 2);
  return (
    <pre className="json" tabIndex={0} aria-label={label}>
      {text}
    </pre>
  );
}

const pretty = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

/** The error of an answer without the status it starts with ("HTTP 500: failure" is shown beside 500 as "failure"). */
export const answerText = (error: string | null) => (error ?? '').replace(/^HTTP \d{3}(: )?/, '');

/**
 * A secret or key to copy: shown in a read-only field (selectable by hand too) with a button that copies it and says
 * so. The clipboard may be refused (a page not in focus, an old browser): the field is then selected for the person to
 * copy.
 */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const [copied, setCopied] = useState<'yes' | 'select' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      (document.getElementById(id) as HTMLInputElement | null)?.select();
      setCopied('select');
    }
  };
  return (
    <div className="copy">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input
          id={id}
          type="text"
          readOnly
          value={value}
          spellCheck={false}
          onFocus={(e) => e.target.select()}
          data-testid={id}
        />
        <button type="button" className="secondary" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {copied && (
        <p role="status" className="muted">
          {copied === 'yes' ? 'Copied.' : 'Selected: copy it with your keyboard.'}
        </p>
      )}
    </div>
  );
}
