import { useEffect, useRef } from 'react';
import { useLocation, useMatches } from 'react-router';

/** What each route gives the frame: its page's name. */
export type Handle = { label: string };

/**
 * The frame's part of each page change, in both sites (the integrators' portal and the operators' console): the
 * document's title names the page and the site, and the focus moves to the new page's content, so that a screen reader
 * reads it, not the link just followed.
 */
export function usePageChange(siteName: string) {
  const label = (useMatches().at(-1)?.handle as Handle | undefined)?.label;
  useEffect(() => {
    if (label) document.title = `${label} · ${siteName}`;
  }, [label, siteName]);
  const { pathname } = useLocation();
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the focus moves when the page does
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [pathname]);
}

/** The first stop of the keyboard: straight to the page's content. */
export function SkipLink() {
  return (
    <a
      className="skip"
      href="#main"
      onClick={(e) => {
        e.preventDefault();
        document.getElementById('main')?.focus();
      }}
    >
      Skip to content
    </a>
  );
}
