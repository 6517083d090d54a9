import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { deliveryLogContract } from '../contracts/delivery-log.ts';
import { deliveryContract } from '../contracts/deliveries.ts';
import { endpointHealthContract } from '../contracts/endpoint-health.ts';
import { queueContract } from '../contracts/queues.ts';
import { repositoryContract } from '../contracts/repositories.ts';
import type { Run } from '../contracts/samples.ts';
import { inMemoryRepositories } from '../fakes.ts';
import { sharedDatabase } from '../support/shared.ts';

for (const contract of [repositoryContract, queueContract, deliveryContract, deliveryLogContract, endpointHealthContract]) {
  contract('in-memory', async () => {
    const repositories = inMemoryRepositories();
    const run: Run = (work) => work(repositories);
    return run;
  });
  contract('mikro-orm', async () => mikroOrmTransact((await sharedDatabase()).orm));
}
