import { useState, type FormEvent } from 'react';
import { api, call } from '../api/client';
import { Json, Loaded, useLoad } from '../ui';

/** A brand looks up a command's result by the `_cid` it was sent with. */
export function Commands({ initial }: { initial: string }) {
  const [cid, setCid] = useState(initial);
  const [asked, setAsked] = useState(initial);
  const submit = (e: FormEvent) => { e.preventDefault(); setAsked(cid.trim()); window.location.hash = `#/commands/${encodeURIComponent(cid.trim())}`; };
  return (
    <>
      <h1>Commands</h1>
      <form className="toolbar" onSubmit={submit} aria-label="Look up a command">
        <label htmlFor="cid">Command id (<code>_cid</code>)</label>
        <input id="cid" required value={cid} onChange={(e) => setCid(e.target.value)} />
        <button type="submit">Look up</button>
      </form>
      {asked ? <Result cid={asked} /> : <p className="empty">Enter the <code>_cid</code> you sent a command with.</p>}
    </>
  );
}

function Result({ cid }: { cid: string }) {
  const [load, reload] = useLoad(async () => {
    const { data, error, response } = await api.GET('/v3/commands/{cid}', { params: { path: { cid } } });
    if (error) throw error;
    return response.status === 204 ? null : data ?? null;
  }, [cid]);
  return (
    <Loaded load={load}>
      {(result) => result === null
        ? <p role="status">Accepted, not run yet. <button type="button" className="secondary" onClick={reload}>Ask again</button></p>
        : <Json value={result} label={`Result of ${cid}`} />}
    </Loaded>
  );
}
