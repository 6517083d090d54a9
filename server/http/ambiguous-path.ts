/**
 * trpc-to-openapi parses the URL again with the WHATWG parser, which resolves `.` and `..` segments (also
 * percent-encoded) and reads `\` as `/`: such a path would reach another operation than the one express matched, or
 * none. Such a path is answered 404, whatever else is wrong with it (a parameter that does not decode included).
 */
export const isAmbiguousPath = (path: string) => new URL(path, 'http://localhost').pathname !== path;

export const AMBIGUOUS_PATH = 'A path segment cannot be "." or "..", and a path cannot hold "\\".';
