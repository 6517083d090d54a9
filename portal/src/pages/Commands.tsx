import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api } from '../api/client';
import { Json, Loaded } from '../ui';

/** A brand looks up a command's result by the `_cid` it was sent with; the command asked is in the address. */
export function Commands() {
  const asked = useParams().cid ?? '';
  const navigate = useNavigate();
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    navigate(`/commands/${encodeURIComponent(String(new FormData(e.currentTarget).get('cid') ?? '').trim())}`);
  };
  return (
    <>
      <h1>Commands</h1>
      <form className="toolbar" onSubmit={submit} aria-label="Look up a command">
        <label htmlFor="cid">
          Command id (<code>_cid</code>)
        </label>
        <input id="cid" name="cid" key={asked} required defaultValue={asked} />
        <button type="submit">Look up</button>
      </form>
      {asked ? (
        <Result cid={asked} />
      ) : (
        <p className="empty">
          Enter the <code>_cid</code> you sent a command with.
        </p>
      )}
    </>
  );
}

function Result({ cid }: { cid: string }) {
  const result = useQuery({
    queryKey: ['commands', cid],
    queryFn: async () => {
      const { data, error, response } = await api.GET('/v3/commands/{cid}', { params: { path: { cid } } });
      if (error) throw error;
      return response.status === 204 ? null : (data ?? null);
    },
    // Accepted and not run yet: asked again until it has run (a command runs within moments).
    refetchInterval: (query) => (query.state.data === null ? 1000 : false),
  });
  return (
    <Loaded query={result}>
      {(answer) =>
        answer === null ? (
          <p role="status">
            Accepted, not run yet.{' '}
            <button type="button" className="secondary" onClick={() => void result.refetch()}>
              Ask again
            </button>
          </p>
        ) : (
          <Json value={answer} label={`Result of ${cid}`} />
        )
      }
    </Loaded>
  );
}
