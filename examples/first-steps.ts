// Your first calls as a brand, with examples/api-client.ts: an access token from your refresh token, one of your
// orders, a command and its outcome, and a refusal.
//   BASE_URL=http://localhost:3000 REFRESH_TOKEN=… ORDER=my-first-order npx tsx examples/first-steps.ts
import { randomUUID } from 'node:crypto';
import { ApiProblem, commandOutcome, logIn, order, sendBrandCommand } from './api-client.ts';

const session = await logIn(process.env.BASE_URL ?? 'http://localhost:3000', process.env.REFRESH_TOKEN ?? '');
const orderId = process.env.ORDER ?? 'my-first-order';
const before = await order(session, orderId);
console.log(`order ${String(before.orderId)}: ${before.status}, updated ${before.updatedAt}`);

// A command: keep its _cid with your change, so that resending it after a timeout cannot run it twice.
const cid = randomUUID();
await sendBrandCommand(session, {
  _v: '1.0.0',
  _cid: cid,
  _type: 'UpdateOrderExternalId',
  orderId,
  externalId: 'my-ref-1',
});
const outcome = await commandOutcome(session, cid);
console.log(
  outcome._type === 'CommandResultEvent'
    ? `done: ${JSON.stringify(outcome.result)}`
    : `refused: ${outcome.code} ${outcome.message}`,
);

// A request the API refuses is an ApiProblem: branch on its code.
try {
  await sendBrandCommand(session, { _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId });
} catch (error) {
  if (!(error instanceof ApiProblem)) throw error;
  console.log(`another command with a used _cid: ${error.status} ${error.code}`);
}
