import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { Empty, Json, Loaded } from '../../ui';
import { useAdmin } from '../Console';
import { call } from '../trpc';
import { useAddressSearch, utc } from './search';

function LookupForm({ id, label, search }: { id: string; label: string; search: ReturnType<typeof useAddressSearch> }) {
  return (
    <form
      role="search"
      className="toolbar"
      onSubmit={(e) => {
        e.preventDefault();
        search.ask();
      }}
    >
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} type="search" value={search.text} onChange={(e) => search.setText(e.target.value)} required />
      </div>
      <button type="submit">Look up</button>
    </form>
  );
}

/** Commands of every account sent under a `_cid`, with their results. */
export function Commands() {
  const admin = useAdmin();
  const search = useAddressSearch('cid');
  const found = useQuery({
    queryKey: ['commands', search.asked],
    queryFn: () => call(admin.commands.find.query({ cid: search.asked })),
    enabled: search.asked !== '',
  });
  return (
    <>
      <h1>Commands</h1>
      <LookupForm id="command-cid" label="Command _cid" search={search} />
      {search.asked && (
        <Loaded query={found}>
          {({ items }) =>
            items.length === 0 ? (
              <Empty>No account holds a command with _cid “{search.asked}” (a result is kept for a while only).</Empty>
            ) : (
              items.map((c) => (
                <section key={c.accountId} aria-label={`Command of account ${c.accountId}`}>
                  <h2>
                    {c.type}{' '}
                    <span className={`status ${c.status === 'succeeded' ? 'delivered' : c.status}`}>{c.status}</span>
                  </h2>
                  <dl className="facts">
                    <dt>Account</dt>
                    <dd>
                      <Link to={`/accounts/${c.accountId}`}>{c.accountId}</Link>
                    </dd>
                    <dt>Accepted</dt>
                    <dd>{utc(c.createdAt)}</dd>
                    <dt>Finished</dt>
                    <dd>{utc(c.finishedAt)}</dd>
                    <dt>Its deliveries</dt>
                    <dd>
                      <Link to={`/deliveries?by=cid&q=${encodeURIComponent(c.cid)}`}>deliveries of this _cid</Link>
                    </dd>
                  </dl>
                  {c.result ? <Json value={c.result} label="The command's result" /> : <Empty>Not run yet.</Empty>}
                </section>
              ))
            )
          }
        </Loaded>
      )}
    </>
  );
}

/** A job by its order id (apiId), whoever's it is. */
export function Jobs() {
  const admin = useAdmin();
  const search = useAddressSearch('order');
  const found = useQuery({
    queryKey: ['job', search.asked],
    queryFn: () => call(admin.jobs.get.query({ apiId: search.asked })),
    enabled: search.asked !== '',
  });
  return (
    <>
      <h1>Jobs</h1>
      <LookupForm id="job-order" label="Order id" search={search} />
      {search.asked && (
        <Loaded query={found}>
          {(job) => (
            <>
              <h2>
                {job.name} <span className="status">{job.status}</span>
              </h2>
              <dl className="facts">
                <dt>Order id</dt>
                <dd>
                  <code>{job.apiId}</code>
                </dd>
                <dt>Brand</dt>
                <dd>
                  <Link to={`/accounts/${job.brandAccountId}`}>{job.brandAccountId}</Link>
                </dd>
                <dt>Partner</dt>
                <dd>{job.partnerId ? <Link to={`/accounts/${job.partnerId}`}>{job.partnerId}</Link> : 'none'}</dd>
                <dt>Updated</dt>
                <dd>{utc(job.updatedAt)}</dd>
                <dt>Its deliveries</dt>
                <dd>
                  <Link to={`/deliveries?by=orderId&q=${encodeURIComponent(job.apiId)}`}>deliveries of this order</Link>
                </dd>
              </dl>
              <Json value={job} label="Every field of the job" />
            </>
          )}
        </Loaded>
      )}
    </>
  );
}
