import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';

// The project's folder, from this file in server/http/ or, in a built start, in dist/server/http/.
const above = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * Where `npm install` builds the portal (portal/, its own package: the API does not import it, it does not import the
 * API).
 */
export const PORTAL_DIST = join(basename(above) === 'dist' ? dirname(above) : above, 'portal', 'dist');

/**
 * The page allows its own files and calls to this origin only: no inline script or style, no frames, no other origin.
 * The refresh token the page holds can leave it only towards this service.
 */
export const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** What every file the portal's pages load answers with (the icon at /favicon.ico too). */
export function securityHeaders(res: express.Response) {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
}

/**
 * The integrator portal at /portal/: hashed files under /portal/assets/ cached for a year (their names change with
 * their content), the page itself never stored (it is the door to signed-in views: the back button after signing out
 * must not show one from a cache). Without a build, a 503 that says how to make one.
 */
export function portalRoutes(options: { localMail: boolean }, dist = PORTAL_DIST) {
  // Without SMTP_URL the sign-in mail is a file in DATA_DIR/mail: the page says so after "link sent".
  const mailDelivery = `<meta name="mail-delivery" content="${options.localMail ? 'file' : 'smtp'}">`;
  const routes = express.Router({ strict: true });
  routes.get('/portal', (_req, res) => {
    res.redirect(301, '/portal/');
  });
  /** A page of the build, or a 503 that says how to make one. */
  const page = (file: string, head: string) => (_req: express.Request, res: express.Response) => {
    securityHeaders(res);
    const path = join(dist, file);
    if (!existsSync(path)) {
      res
        .status(503)
        .type('text/plain')
        .send('The portal is not built: run `npm run portal:build` (npm install builds it too).\n');
      return;
    }
    res.setHeader('content-security-policy', PORTAL_CSP);
    res.setHeader('cache-control', 'no-store');
    res.type('html').send(readFileSync(path, 'utf8').replace('<head>', `<head>${head}`));
  };
  routes.get('/portal/', page('index.html', mailDelivery));
  // The operator console (docs/operators.md): the same build, a page of its own, signed in with ADMIN_TOKEN.
  routes.get('/portal/operator', (_req, res) => {
    res.redirect(301, '/portal/operator/');
  });
  routes.get('/portal/operator/', page('operator.html', ''));
  routes.use(
    '/portal/assets',
    (_req, res, next) => {
      securityHeaders(res);
      next();
    },
    express.static(join(dist, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      etag: false,
    }),
    (_req, res) => {
      res.status(404).type('text/plain').send('No such file of the portal.\n');
    },
  );
  return routes;
}
