/**
 * Which face a request was asked on, by its path (without the query): tRPC's at `/trpc` and under it, answered in
 * tRPC's shape (the procedure's path, '' for `/trpc` itself), else REST's, answered in a problem (null).
 */
export function trpcProcedureOf(path: string): string | null {
  if (path === '/trpc') return '';
  return path.startsWith('/trpc/') ? path.slice('/trpc/'.length) : null;
}
