// Writes the document served at /openapi.json to a file, without a server or a database: the portal's API types
// (portal/src/api/schema.d.ts) are generated from it, so a change of the REST face shows in the portal's type check.
// Usage: tsx server/openapi/emit.ts <file>
import { writeFileSync } from 'node:fs';
import { routeTable } from '../routers/contracts.ts';
import { appRouter } from '../routers/index.ts';
import { useWireMessages } from '../zod-messages.ts';
import { buildOpenApiDocument } from './document.ts';

useWireMessages();
const target = process.argv[2];
if (!target) throw new Error('usage: tsx server/openapi/emit.ts <file>');
writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(appRouter, routeTable), null, 2)}\n`);
