import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sdkProblems } from '../../adapters/tracing-problems.ts';

// What OpenTelemetry's SDK says went wrong reaches the log (CONTRACT §13 with tracing on): each problem once a
// minute at most, what came before the log whole, the diagnostic log's arguments as one text.
const test = suite("OpenTelemetry's problems in the log");

function logged() {
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  return { lines, warn: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }) };
}

test('a failing export is said once a minute, then with the count held back since', () => {
  let clock = 0;
  const problems = sdkProblems(() => clock);
  const log = logged();
  problems.sendTo(log.warn);
  for (let i = 0; i < 5; i++) problems.exportFailed(new Error('connect ECONNREFUSED 127.0.0.1:4318'));
  assert.equal(log.lines, [
    { fields: { problem: 'connect ECONNREFUSED 127.0.0.1:4318' }, message: 'traces could not be exported' },
  ]);
  clock = 59_999;
  problems.exportFailed(new Error('connect ECONNREFUSED 127.0.0.1:4318'));
  assert.is(log.lines.length, 1);
  clock = 60_000;
  problems.exportFailed(new Error('connect ECONNREFUSED 127.0.0.1:4318'));
  assert.equal(log.lines[1], {
    fields: { problem: 'connect ECONNREFUSED 127.0.0.1:4318', heldBack: 5 },
    message: 'traces could not be exported',
  });
});

test('another problem is not held back by the first; the same with other numbers is', () => {
  const problems = sdkProblems(() => 0);
  const log = logged();
  problems.sendTo(log.warn);
  problems.warned('Dropped 12 spans because maxQueueSize reached');
  problems.warned('Dropped 30 spans because maxQueueSize reached');
  problems.warned('Received Partial Success response:', { rejectedSpans: 2 });
  assert.equal(
    log.lines.map((l) => l.fields.problem),
    ['Dropped 12 spans because maxQueueSize reached', 'Received Partial Success response: {"rejectedSpans":2}'],
  );
  assert.is(log.lines[0]!.message, "OpenTelemetry's SDK reports a problem");
});

test('what came before the log is written whole when it comes, and what overflowed is counted', () => {
  const problems = sdkProblems(() => 0);
  problems.warned('Configuration: OTEL_EXPORTER_OTLP_TIMEOUT is invalid');
  problems.warned('Configuration: OTEL_EXPORTER_OTLP_COMPRESSION is invalid');
  for (let i = 0; i < 30; i++) problems.exportFailed('refused');
  const log = logged();
  problems.sendTo(log.warn);
  assert.is(log.lines.length, 21, 'the 20 kept, then a line of the count');
  assert.match(String(log.lines[0]!.fields.problem), 'OTEL_EXPORTER_OTLP_TIMEOUT');
  assert.match(String(log.lines[1]!.fields.problem), 'OTEL_EXPORTER_OTLP_COMPRESSION');
  assert.is(log.lines[20]!.fields.heldBack, 12);
});

test.run();
