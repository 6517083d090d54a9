import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { repositoryContract, type Run } from '../contracts/repositories.ts';
import { inMemoryRepositories } from '../fakes.ts';
import { sharedDatabase } from '../support/shared.ts';

repositoryContract('in-memory', async () => {
  const repositories = inMemoryRepositories();
  const run: Run = (work) => work(repositories);
  return run;
});

repositoryContract('mikro-orm', async () => mikroOrmTransact((await sharedDatabase()).orm));
