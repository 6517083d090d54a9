import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { deliveryContract } from '../contracts/deliveries.ts';
import { deliveryByEndpointContract } from '../contracts/deliveries-by-endpoint.ts';
import { deliveryClaimContract } from '../contracts/deliveries-claims.ts';
import { deliveryPausedContract } from '../contracts/deliveries-paused.ts';
import { deliveryShareContract } from '../contracts/deliveries-share.ts';
import { deliveryLogContract } from '../contracts/delivery-log.ts';
import { endpointHealthContract } from '../contracts/endpoint-health.ts';
import { endpointHealthRecordContract } from '../contracts/endpoint-health-records.ts';
import { operatorSearchContract } from '../contracts/operator-search.ts';
import { orderRepositoryContract } from '../contracts/order-repositories.ts';
import { queueContract } from '../contracts/queues.ts';
import { repositoryContract } from '../contracts/repositories.ts';
import type { Run } from '../contracts/samples.ts';
import { inMemoryRepositories } from '../fakes.ts';
import { sharedDatabase } from '../support/shared.ts';

for (const contract of [
  repositoryContract,
  orderRepositoryContract,
  queueContract,
  deliveryByEndpointContract,
  deliveryClaimContract,
  deliveryShareContract,
  deliveryPausedContract,
  deliveryContract,
  deliveryLogContract,
  endpointHealthContract,
  endpointHealthRecordContract,
  operatorSearchContract,
]) {
  contract('in-memory', async () => {
    const repositories = inMemoryRepositories();
    const run: Run = (work) => work(repositories);
    return run;
  });
  contract('mikro-orm', async () => mikroOrmTransact((await sharedDatabase()).orm));
}
