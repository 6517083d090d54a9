import { z } from 'zod';

/**
 * zod's messages as a caller reads them on either face: a member that is missing says "Required" (zod 4 says
 * "Invalid input: expected string, received undefined"); every other issue keeps zod's own text.
 */
const wireErrorMap: z.core.$ZodErrorMap = (issue) =>
  issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined;

/**
 * Installs the map in zod's configuration, which every schema reads when it reports (the composition root calls it).
 */
export function useWireMessages(): void {
  z.config({ customError: wireErrorMap });
}
