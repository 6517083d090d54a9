// npm run mutation — StrykerJS over the domain's rules, judged by the domain's unit tests (in-memory fakes, no
// database), so that each mutant runs in seconds: what survives is a rule the fast tests do not pin down. The HTTP
// and process suites cover the same rules again on a real database, but at minutes per mutant they cannot be the judge.
const unitTests = [
  'accounts',
  'auth',
  'brand-commands',
  'deliveries',
  'jobs',
  'partner-scope',
  'payloads',
  'self-service',
]
  .map((name) => `tests/domain/${name}.test.ts`)
  .join(' ');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  commandRunner: { command: `node --import tsx tests/run.ts ${unitTests}` },
  // The rules that keep tenants apart and commands exact (who may see and change what, the _cid comparison, the
  // cancellation catalogue, the mapping): the whole domain has about 1,300 mutants, two hours on this machine.
  mutate: [
    'domain/partner-scope.ts',
    'domain/command.ts',
    'domain/auth.ts',
    'domain/cancellation.ts',
    'domain/order-mapping.ts',
    'domain/use-cases/authenticate.ts',
    'domain/use-cases/run-partner-command.ts',
    'domain/use-cases/accept-command.ts',
    'domain/use-cases/poll-order.ts',
    'domain/use-cases/own-deliveries.ts',
  ],
  coverageAnalysis: 'off',
  concurrency: 2,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  // Stryker rewrites the tsconfig of its sandbox with the TypeScript 5 API, which TypeScript 7 no longer has; tsx
  // runs the sandbox without it, so point Stryker at no tsconfig at all.
  tsconfigFile: 'no-tsconfig-for-stryker.json',
  cleanTempDir: 'always',
};
