import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { Empty, Loaded, MutationProblem } from '../../ui';
import { useAdmin } from '../Console';
import { type Answers, call, type Inputs } from '../trpc';
import { EndpointState } from './Endpoints';
import { useAddressSearch, utc } from './search';

export function Accounts() {
  const admin = useAdmin();
  const { asked, text, setText, ask } = useAddressSearch();
  const found = useQuery({
    queryKey: ['accounts', asked],
    queryFn: () => call(admin.accounts.search.query({ text: asked })),
    enabled: asked !== '',
  });
  return (
    <>
      <h1>Accounts</h1>
      <form
        role="search"
        className="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          ask();
        }}
      >
        <div className="field">
          <label htmlFor="account-search">Name or contact e-mail (or a part of it)</label>
          <input id="account-search" type="search" value={text} onChange={(e) => setText(e.target.value)} required />
        </div>
        <button type="submit">Search</button>
      </form>
      {asked && (
        <Loaded query={found}>
          {({ items }) =>
            items.length === 0 ? (
              <Empty>No account’s name or contact e-mail contains “{asked}”.</Empty>
            ) : (
              <table>
                <caption className="muted">Accounts matching “{asked}”</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Role</th>
                    <th scope="col">Matching contacts</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((a) => (
                    <tr key={a.id}>
                      <td>
                        <Link to={`/accounts/${a.id}`}>{a.name}</Link>
                      </td>
                      <td>{a.parentId ? `${a.role} (child)` : a.role}</td>
                      <td>{a.matchedEmails.join(', ') || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      )}
    </>
  );
}

export function AccountDetail() {
  const admin = useAdmin();
  const { id = '' } = useParams();
  const account = useQuery({
    queryKey: ['account', id],
    queryFn: () => call(admin.accounts.get.query({ accountId: id })),
  });
  return (
    <Loaded query={account}>
      {(a) => (
        <>
          <h1>{a.name}</h1>
          <dl className="facts">
            <dt>Id</dt>
            <dd>
              <code>{a.id}</code>
            </dd>
            <dt>Role</dt>
            <dd>{a.role}</dd>
            <dt>Created</dt>
            <dd>{utc(a.createdAt)}</dd>
            <dt>Master account</dt>
            <dd>{a.parent ? <Link to={`/accounts/${a.parent.id}`}>{a.parent.name}</Link> : 'none'}</dd>
            <dt>Child accounts</dt>
            <dd>
              {a.children.length === 0
                ? 'none'
                : a.children.map((c, i) => (
                    <span key={c.id}>
                      {i > 0 && ', '}
                      <Link to={`/accounts/${c.id}`}>{c.name}</Link>
                    </span>
                  ))}
            </dd>
          </dl>
          <Contacts accountId={a.id} contacts={a.contacts} />
          <h2>Webhook configurations</h2>
          {a.webhookConfigs.length === 0 ? (
            <Empty>This account has no webhook configuration of its own.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Scope</th>
                  <th scope="col">URL</th>
                  <th scope="col">Health</th>
                </tr>
              </thead>
              <tbody>
                {a.webhookConfigs.map((c) => (
                  <tr key={c.scope}>
                    <td>{c.scope}</td>
                    <td>{c.url ?? '—'}</td>
                    <td>
                      <EndpointState config={c} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <FailedDeliveries accountId={a.id} />
        </>
      )}
    </Loaded>
  );
}

type Contact = Answers['accounts']['get']['contacts'][number];

function Contacts({ accountId, contacts }: { accountId: string; contacts: Contact[] }) {
  const admin = useAdmin();
  const client = useQueryClient();
  const change = useMutation({
    mutationFn: (input: Inputs['contacts']['setApiAccess']) => call(admin.contacts.setApiAccess.mutate(input)),
    onSuccess: () => client.invalidateQueries({ queryKey: ['account', accountId] }),
  });
  // Withdrawing ends the contact's sessions at once: asked first. Granting is not: it is undone as easily.
  const [withdrawing, setWithdrawing] = useState<string | null>(null);
  return (
    <>
      <h2>Contacts</h2>
      <MutationProblem mutation={change} />
      {contacts.length === 0 ? (
        <Empty>No contacts.</Empty>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">API access</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {contacts.map((c) => (
              <tr key={c.id}>
                <td>{c.email}</td>
                <td>{c.apiAccess ? 'yes: can sign in' : 'no'}</td>
                <td>
                  <button
                    type="button"
                    className="secondary"
                    // Not `disabled` while a change is under way: that would drop the focus the dialog gave back.
                    aria-disabled={change.isPending}
                    aria-label={`${c.apiAccess ? 'Withdraw API access of' : 'Grant API access to'} ${c.email}`}
                    onClick={() => {
                      if (change.isPending) return;
                      if (c.apiAccess) setWithdrawing(c.id);
                      else change.mutate({ contactId: c.id, apiAccess: true });
                    }}
                  >
                    {c.apiAccess ? 'Withdraw API access' : 'Grant API access'}
                  </button>
                  {withdrawing === c.id && (
                    <WithdrawQuestion
                      contact={c}
                      answer={(withdraw) => {
                        setWithdrawing(null);
                        if (withdraw) change.mutate({ contactId: c.id, apiAccess: false });
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/**
 * Asked before withdrawing, in a modal dialog: Escape or "Keep access" changes nothing, and the focus goes back to the
 * contact's button either way (which then grants, once withdrawn).
 */
function WithdrawQuestion({ contact, answer }: { contact: Contact; answer: (withdraw: boolean) => void }) {
  const id = `withdraw-${contact.id}`;
  const dialog = useRef<HTMLDialogElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
    keep.current?.focus(); // on the answer that changes nothing
  }, []);
  const close = (answered: 'withdraw' | 'keep') => dialog.current?.close(answered);
  return (
    <dialog
      ref={dialog}
      aria-labelledby={`${id}-question`}
      aria-describedby={`${id}-detail`}
      className="confirm"
      onClose={() => answer(dialog.current?.returnValue === 'withdraw')}
    >
      <p id={`${id}-question`}>Withdraw API access of {contact.email}?</p>
      <p id={`${id}-detail`}>
        Their tokens stop working at once, and they cannot sign in until access is granted again.
      </p>
      <div className="buttons">
        <button type="button" onClick={() => close('withdraw')}>
          Withdraw
        </button>
        <button type="button" className="secondary" ref={keep} onClick={() => close('keep')}>
          Keep access
        </button>
      </div>
    </dialog>
  );
}

function FailedDeliveries({ accountId }: { accountId: string }) {
  const admin = useAdmin();
  const failed = useQuery({
    queryKey: ['failed', accountId],
    queryFn: () => call(admin.deliveries.list.query({ accountId, status: 'failed', limit: 20 })),
  });
  return (
    <>
      <h2>Failed deliveries</h2>
      <Loaded query={failed}>
        {({ items }) =>
          items.length === 0 ? (
            <Empty>None of this account’s deliveries has failed.</Empty>
          ) : (
            <ul className="events">
              {items.map((d) => (
                <li key={d.id}>
                  <Link to={`/deliveries/${d.id}`}>
                    {d.eventType}
                    {d.orderId && ` of order ${d.orderId}`}, {utc(d.createdAt)}
                  </Link>
                  {' · '}
                  {d.attempts.length} attempts
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </>
  );
}
