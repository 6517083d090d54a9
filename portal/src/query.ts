// Server state through TanStack Query: one client per session (the portal keys it by the signed-in contact, so that
// nothing one account loaded is ever shown to another), problems as the errors it hands on.
import { QueryClient } from '@tanstack/react-query';
import { type Problem, SignedOut } from './api/session';

declare module '@tanstack/react-query' {
  interface Register {
    defaultError: Problem;
  }
}

/** Asked again only when no answer came at all (status 0): a 4xx or 5xx answer is the service's word, shown as is. */
const retry = (failures: number, error: unknown) =>
  !(error instanceof SignedOut) && failures < 2 && (error as Problem).status === 0;

export const newQueryClient = () =>
  new QueryClient({
    defaultOptions: {
      // Stale at once: what the worker changes (health, deliveries) is asked again whenever a page shows it.
      // Asked whatever the browser says of its network (`always`): that flag follows the machine's network changes and
      // can be wrong, and the default paused every request while it was down, leaving a page "Loading…" with nothing
      // sent (`offlineFirst` paused the retries). Really offline, a request fails and its problem is shown (status 0),
      // and is asked again when the browser says it is back (`always` alone would not).
      queries: { retry, staleTime: 0, refetchOnWindowFocus: true, refetchOnReconnect: true, networkMode: 'always' },
      mutations: { retry: false, networkMode: 'always' },
    },
  });
