import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { SignedOut, type Problem } from './api/session';

export type Load<T> = { state: 'loading' } | { state: 'failed'; problem: Problem } | { state: 'ok'; data: T };

/** Runs `load` when its keys change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, keys: unknown[]): [Load<T>, () => void] {
  const [result, setResult] = useState<Load<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const shownKeys = useRef<unknown[] | null>(null);
  useEffect(() => {
    let current = true;
    // Other keys show a loading state; a reload keeps what is shown (and the forms below it) until the answer.
    const sameKeys = shownKeys.current !== null && shownKeys.current.length === keys.length && shownKeys.current.every((k, i) => Object.is(k, keys[i]));
    shownKeys.current = keys;
    if (!sameKeys) setResult({ state: 'loading' });
    load().then(
      (data) => { if (current) setResult({ state: 'ok', data }); },
      (error: unknown) => {
        if (!current || error instanceof SignedOut) return;
        setResult({ state: 'failed', problem: error as Problem });
      },
    );
    return () => { current = false; };
  }, [...keys, round]);
  return [result, useCallback(() => setRound((r) => r + 1), [])];
}

/** The service's problem: its detail, and the request id to quote. */
export function ProblemBox({ problem }: { problem: Problem }) {
  return (
    <div className="problem" role="alert">
      <p>{problem.detail}</p>
      {problem.requestId && <p className="muted">Request id: <code>{problem.requestId}</code></p>}
    </div>
  );
}

export function Loading() {
  return <p className="muted" role="status">Loading…</p>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** Loading, failure and content of a load in one place. */
export function Loaded<T>({ load, children }: { load: Load<T>; children: (data: T) => ReactNode }) {
  if (load.state === 'loading') return <Loading />;
  if (load.state === 'failed') return <ProblemBox problem={load.problem} />;
  return <>{children(load.data)}</>;
}

export function Json({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === 'string' ? pretty(value) : JSON.stringify(value, null, 2);
  return <pre className="json" tabIndex={0} aria-label={label}>{text}</pre>;
}

const pretty = (text: string) => {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
};

/** Runs `reload` every `ms` while `active` and the page is in view: what is shown follows a state that is about to change. */
export function useRefreshWhile(active: boolean, reload: () => void, ms = 1000) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => { if (document.visibilityState === 'visible') reload(); }, ms);
    return () => clearInterval(timer);
  }, [active, reload, ms]);
}

/** The error of an answer without the status it starts with ("HTTP 500: failure" is shown beside 500 as "failure"). */
export const answerText = (error: string | null) => (error ?? '').replace(/^HTTP \d{3}(: )?/, '');

/** Runs an action, remembering whether it is under way and its last problem. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setProblem(null);
    try {
      await action();
    } catch (error) {
      if (!(error instanceof SignedOut)) setProblem(error as Problem);
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, setProblem, run };
}
