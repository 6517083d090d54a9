// npm run admin -- <command> [options]; `npm run admin -- --help` lists the commands.
import { runCli } from './cli.ts';

process.exitCode = await runCli(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).catch((error: unknown) => {
  process.stderr.write(`failed: ${(error as Error).message ?? error}\n`);
  return 1;
});
