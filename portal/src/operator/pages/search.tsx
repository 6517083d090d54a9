import { useState } from 'react';
import { useSearchParams } from 'react-router';

/**
 * A search kept in the address (`#/accounts?q=…`), so that a result's page leads back to it: the text being typed, and
 * the one asked for.
 */
export function useAddressSearch(name = 'q') {
  const [params, setParams] = useSearchParams();
  const asked = params.get(name) ?? '';
  const [text, setText] = useState(asked);
  const ask = (extra: Record<string, string> = {}) =>
    setParams({ ...Object.fromEntries(params), ...extra, [name]: text.trim() });
  return { asked, text, setText, ask, params };
}

/** A time as operators read it: UTC, to the second. */
export const utc = (iso: string | null) => (iso ? `${iso.slice(0, 19).replace('T', ' ')} UTC` : '—');
