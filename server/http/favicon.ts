import type express from 'express';
import { securityHeaders } from './portal.ts';

// Browsers ask every origin for /favicon.ico whether a page names an icon or not: a 404 for each page is noise in the
// logs and the metrics. Inline rather than a file beside this one: the build compiles server/ to dist/ and copies
// nothing else.
const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="6" fill="#1f3a5f"/>' +
  '<path d="M8 17l5 5 11-12" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/></svg>';

/**
 * GET /favicon.ico: a small SVG (what modern browsers accept there), cached a week, with the portal's security
 * headers; its own policy forbids everything, so the file opened on its own runs and loads nothing.
 */
export function faviconRoute(): express.RequestHandler {
  return (_req, res) => {
    securityHeaders(res);
    res.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    res.setHeader('cache-control', 'public, max-age=604800');
    res.type('image/svg+xml').send(ICON);
  };
}
