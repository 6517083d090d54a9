/**
 * Ids the store keeps in uuid columns. The API types every id as a string (CONTRACT §3: an id that names nothing is
 * the path's not-found answer, whatever its shape), so a string of another shape names nothing here: it is answered as
 * absent without asking the server, which would refuse it as a malformed uuid (22P02) rather than find nothing.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isStoredId = (id: string): boolean => UUID.test(id);
