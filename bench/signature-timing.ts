// npm run bench:signature-timing — is the comparison of a partner command's signature constant-time? Times
// hmacSignatures.matches (the service's check) with a signature wrong in its first byte against one wrong in its last
// byte, interleaved in many rounds, and the same for a naive string comparison (===) as the peer that leaks. Writes
// its section of docs/BENCHMARKS.md.
import { hexSignature, hmacSignatures } from '../adapters/signatures.ts';
import { median, writeSection } from './report.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 31);
const PER_ROUND = Number(process.env.BENCH_CALLS ?? 20_000);
const key = 'partner-signing-key-0123456789';
const body = new TextEncoder().encode(
  JSON.stringify({
    _v: '1.0.0',
    _cid: 'timing',
    _type: 'SetJobAppointment',
    jobApiId: 'job-1',
    appointmentStart: '2026-12-01T09:00:00Z',
    appointmentEnd: '2026-12-01T11:00:00Z',
  }),
);
const right = hexSignature(key, body);
const flip = (hex: string, at: number) => hex.slice(0, at) + (hex[at] === '0' ? '1' : '0') + hex.slice(at + 1);
const wrongFirst = flip(right, 0);
const wrongLast = flip(right, right.length - 1);

/** Nanoseconds per call of `check` over PER_ROUND calls. */
function time(check: (signature: string) => boolean, signature: string): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < PER_ROUND; i++) if (check(signature)) sink++;
  const ns = Number(process.hrtime.bigint() - started) / PER_ROUND;
  if (sink !== 0) throw new Error('a wrong signature matched');
  return ns;
}

const service = (signature: string) => hmacSignatures.matches(key, body, signature);
// The peer that leaks: the expected signature computed alike, then compared with ===, which stops at the first
// differing character. Only the comparison is timed for it (the HMAC would hide a few nanoseconds in its noise).
const naive = (signature: string) => signature === right;

const samples = {
  serviceFirst: [] as number[],
  serviceLast: [] as number[],
  naiveFirst: [] as number[],
  naiveLast: [] as number[],
};
for (let i = 0; i < 3; i++) {
  time(service, wrongFirst);
  time(service, wrongLast);
  time(naive, wrongFirst);
  time(naive, wrongLast);
} // warm-up
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? [wrongFirst, wrongLast] : [wrongLast, wrongFirst];
  for (const signature of order) {
    samples[signature === wrongFirst ? 'serviceFirst' : 'serviceLast'].push(time(service, signature));
    samples[signature === wrongFirst ? 'naiveFirst' : 'naiveLast'].push(time(naive, signature));
  }
}
const m = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)])) as Record<
  keyof typeof samples,
  number
>;
const gap = (a: number, b: number) => `${(((b - a) / a) * 100).toFixed(1)} %`;
console.log(m);
await writeSection(
  'Signature comparison: wrong first byte against wrong last byte',
  `
Command: \`npm run bench:signature-timing\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} interleaved rounds of ${PER_ROUND} calls each, medians).

| comparison | wrong first byte, ns/call | wrong last byte, ns/call | difference |
|---|---:|---:|---:|
| service: \`hmacSignatures.matches\` (HMAC of the body, then \`timingSafeEqual\` of the digests) | ${m.serviceFirst.toFixed(0)} | ${m.serviceLast.toFixed(0)} | ${gap(m.serviceFirst, m.serviceLast)} |
| peer that leaks: \`===\` on the hex strings (comparison only) | ${m.naiveFirst.toFixed(1)} | ${m.naiveLast.toFixed(1)} | ${gap(m.naiveFirst, m.naiveLast)} |

The service's time does not depend on where a wrong signature differs (the difference is noise, of either sign from run
to run); \`===\` stops at the first differing character, which is what an attacker guessing a signature byte by byte
would measure. The admin token is compared the same way as the service compares signatures, after hashing both sides
to equal lengths (\`secretEquals\` in \`server/pipeline/credentials.ts\`).
`,
);
console.log('written to docs/BENCHMARKS.md');
