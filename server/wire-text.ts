import { z } from 'zod';

// U+0000, or a surrogate half without its other half: JavaScript strings may hold them, PostgreSQL's text and jsonb
// may not (22021, 22P05), and nothing an integrator means can need them.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_MESSAGE = 'must not hold U+0000 or an unpaired surrogate';

/**
 * The one string type of every text input, in bodies, queries and paths alike (CONTRACT §3): a string that could not
 * be stored is the caller's mistake, a 400 whose issue names where it was, never a database error.
 */
export const wireString = () => z.string().refine((value) => !UNSTORABLE.test(value), UNSTORABLE_MESSAGE);

/** A caller's name for something it makes or stores (a `_cid`, an external id): 1…255 characters. */
export const reference = () => wireString().min(1).max(255);

/**
 * A reference that looks something up (an id, an order's apiId, an invoice's id, a `_cid` to poll): of any length,
 * since one longer than anything stored names nothing, which is the path's not-found (CONTRACT §3), not a 400.
 */
export const lookupReference = () => wireString().min(1);
