import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';
import { skipUnless } from '../support/skip.ts';

// docs/monitoring: the alert rules checked and unit-tested by Prometheus' own promtool, and every metric name of the
// rules and of the Grafana dashboard found on a running service's GET /metrics (on this run's database).
const test = suite('docs/monitoring: the alert rules and the dashboard');
const dir = join(import.meta.dirname, '..', '..', 'docs', 'monitoring');
const RULES = join(dir, 'alerts.yml');
const RULE_TESTS = join(dir, 'alerts.test.yml');
const DASHBOARD = join(dir, 'grafana-dashboard.json');
/** The datasource of every panel and query: the import's input, which Grafana replaces with the one picked. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's placeholder, not a template literal's
const DATASOURCE_INPUT = '${DS_PROMETHEUS}';

const hasPromtool = !spawnSync('promtool', ['--version']).error;
const NO_PROMTOOL =
  "needs promtool (Debian's prometheus package: apt-get install -y --no-install-recommends prometheus)";
/** Series Prometheus makes itself for every target, which no /metrics answers. */
const PROMETHEUS_OWN = new Set(['up']);
/** Metrics a process has only with DATABASE_REPLICA_URL (CONTRACT §12): looked for in server/metrics.ts instead. */
const WITH_REPLICAS = ['db_replica_lag_seconds', 'db_replica_up'];

const promtool = (...args: string[]) => {
  const run = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
};

/** The `expr:` of every rule of alerts.yml: one line, or the indented block after `expr: |` (the file's two forms). */
function ruleExpressions(yaml: string): string[] {
  const lines = yaml.split('\n');
  const exprs: string[] = [];
  lines.forEach((line, i) => {
    const m = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!m) return;
    const [, indent, rest] = m;
    if (!/^[|>][-+]?$/.test(rest!)) {
      exprs.push(rest!.replace(/^'(.*)'$|^"(.*)"$/, '$1$2'));
      return;
    }
    const block: string[] = [];
    for (const next of lines.slice(i + 1)) {
      if (next.trim() !== '' && next.search(/\S/) <= indent!.length) break;
      block.push(next.trim());
    }
    exprs.push(block.join(' ').trim());
  });
  return exprs;
}

/** PromQL's words that read like names: operators, modifiers and the two special numbers. */
const KEYWORDS = new Set(
  'and or unless atan2 by without on ignoring group_left group_right offset bool inf nan'.split(' '),
);

/** The metric names a PromQL expression selects: identifiers that are not functions, keywords, labels or durations. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const names = [...bare.matchAll(/(?<![\w.$:])([a-zA-Z_:][\w:]*)(\s*\()?/g)]
    .filter((m) => !m[2]) // a function's name is followed by its parenthesis
    .map((m) => m[1]!)
    .filter((n) => !KEYWORDS.has(n.toLowerCase()));
  return [...new Set(names)];
}

type Panel = {
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  targets?: { expr?: string; datasource?: { uid?: string } }[];
  panels?: Panel[];
};
type Dashboard = {
  __inputs: { name: string; type: string; pluginId: string }[];
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { query: string | { query: string } }[] };
};
const dashboard = (): Dashboard => JSON.parse(readFileSync(DASHBOARD, 'utf8'));
/** Every panel but the rows, which only group them (a collapsed row holds its panels). */
const dataPanels = (d: Dashboard) => d.panels.flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]));
const panelExpressions = (d: Dashboard) => dataPanels(d).flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
const dashboardExpressions = (d: Dashboard) => [
  ...panelExpressions(d),
  // A variable's label_values(metric, label) names a metric, then a label.
  ...d.templating.list.map((v) =>
    (typeof v.query === 'string' ? v.query : v.query.query).replace(/label_values\(\s*([^,)]+),[^)]*\)/, '$1'),
  ),
];

test('promtool check rules: alerts.yml is a valid rule file, every alert with a severity and what to look at', () => {
  if (skipUnless(hasPromtool, NO_PROMTOOL)) return;
  const yaml = readFileSync(RULES, 'utf8');
  const alerts = yaml.match(/^\s*- alert: /gm)?.length ?? 0;
  const checked = promtool('check', 'rules', RULES);
  assert.is(checked.status, 0, checked.output);
  assert.match(checked.output, `SUCCESS: ${alerts} rules found`);
  assert.ok(alerts >= 10, `only ${alerts} alerts`);
  assert.is(yaml.match(/^\s*severity: (page|ticket)$/gm)?.length, alerts, 'each alert: severity page or ticket');
  assert.is(yaml.match(/^\s*summary: /gm)?.length, alerts, 'each alert: a summary');
  assert.is(yaml.match(/^\s*description: /gm)?.length, alerts, 'each alert: a description');
  assert.is(ruleExpressions(yaml).length, alerts, 'each alert: one expression read');
});

test('promtool test rules: alerts.test.yml fires the command-age, overdue-delivery and 5xx-ratio alerts', () => {
  if (skipUnless(hasPromtool, NO_PROMTOOL)) return;
  const tests = readFileSync(RULE_TESTS, 'utf8');
  for (const alert of ['PartnerApiCommandWaiting', 'PartnerApiDeliveryOverdue', 'PartnerApiHttp5xxRatio'])
    assert.match(tests, new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`), `${alert} fires`);
  assert.match(tests, /exp_alerts: \[\]/, 'and some do not');
  const run = promtool('test', 'rules', RULE_TESTS);
  assert.is(run.status, 0, run.output);
  assert.match(run.output, 'SUCCESS');
});

test('the dashboard: a Prometheus datasource input, and every panel a datasource and a query', () => {
  const d = dashboard();
  assert.ok(d.schemaVersion >= 36, `schemaVersion ${d.schemaVersion}`);
  const input = d.__inputs.find((i) => i.name === 'DS_PROMETHEUS');
  assert.equal(input && { type: input.type, pluginId: input.pluginId }, { type: 'datasource', pluginId: 'prometheus' });
  const panels = dataPanels(d);
  assert.ok(panels.length >= 15, `only ${panels.length} panels`);
  for (const panel of panels) {
    assert.equal(panel.datasource, { type: 'prometheus', uid: DATASOURCE_INPUT }, `${panel.title}: datasource`);
    assert.ok((panel.targets ?? []).length >= 1, `${panel.title}: no query`);
    for (const target of panel.targets ?? []) {
      assert.ok(target.expr?.trim(), `${panel.title}: a query without expr`);
      assert.is(target.datasource?.uid, DATASOURCE_INPUT, `${panel.title}: a query's datasource`);
    }
  }
});

test("promtool check rules: every dashboard query is PromQL (Grafana's variables given values)", () => {
  if (skipUnless(hasPromtool, NO_PROMTOOL)) return;
  const exprs = panelExpressions(dashboard());
  const rules = exprs.map((expr, i) => {
    const query = expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', '.+');
    return `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(query)}\n`;
  });
  const tmp = mkdtempSync(join(tmpdir(), 'dashboard-queries-'));
  try {
    writeFileSync(join(tmp, 'queries.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules.join('')}`);
    const checked = promtool('check', 'rules', join(tmp, 'queries.yml'));
    assert.is(checked.status, 0, checked.output);
    assert.match(checked.output, `SUCCESS: ${exprs.length} rules found`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('reading the names: functions, keywords, labels, ranges and numbers are not metrics', () => {
  const expr =
    'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{status=~"5.."}[5m] offset 1d))) / on() b > 1e3 ' +
    'and max(c) - min_over_time(max(d)[1h:1m]) unless e offset 10m';
  assert.equal(metricNames(expr), ['a_bucket', 'b', 'c', 'd', 'e']);
  assert.equal(ruleExpressions('    expr: x > 1\n    expr: |\n      y\n      / z\n    for: 5m\n'), ['x > 1', 'y / z']);
});

test("every metric name of the rules and the dashboard is on a running service's /metrics", async () => {
  const app = await appWithMailbox();
  app.worker.start();
  try {
    // One of each kind first, so that the labelled series exist: a request, a brand command executed, a webhook sent.
    const receiver = await startReceiver();
    const brand = await integrator(app, 'brand');
    await app.admin.call('webhookConfigs.upsert', {
      accountId: brand.accountId,
      scope: 'brand',
      url: receiver.url('/monitoring'),
      transformer: 'default',
      version: '1.3.0',
    });
    const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
    const cid = randomUUID();
    const sent = await app.http
      .post('/v3/commands')
      .set('authorization', `Bearer ${brand.accessToken}`)
      .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId });
    assert.is(sent.status, 202);
    await receiver.until((r) => r.some((x) => x.payload._cid === cid));

    let text = '';
    for (let i = 0; i < 100; i++) {
      const res = await app.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`);
      assert.is(res.status, 200);
      text = res.text;
      if (/^commands_executed_total\{/m.test(text) && /^webhook_deliveries_total\{/m.test(text)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const exported = new Set(
      text
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => /^[\w:]+/.exec(l)![0]),
    );
    assert.ok(exported.has('commands_executed_total') && exported.has('webhook_deliveries_total'), 'counted');

    const used = (exprs: string[]) => [...new Set(exprs.flatMap(metricNames))].sort();
    const inRules = used(ruleExpressions(readFileSync(RULES, 'utf8')));
    const inDashboard = used(dashboardExpressions(dashboard()));
    assert.ok(inRules.length >= 10 && inDashboard.length >= 20, `${inRules.length} and ${inDashboard.length} names`);
    const metricsSource = readFileSync(join(import.meta.dirname, '..', '..', 'server', 'metrics.ts'), 'utf8');
    for (const name of WITH_REPLICAS) assert.match(metricsSource, `name: '${name}'`);
    const missing = (names: string[]) =>
      names.filter((n) => !exported.has(n) && !PROMETHEUS_OWN.has(n) && !WITH_REPLICAS.includes(n));
    assert.equal(missing(inRules), [], 'alerts.yml: names no /metrics answers');
    assert.equal(missing(inDashboard), [], 'grafana-dashboard.json: names no /metrics answers');

    // And the other way: every metric of the service's own (not prom-client's defaults) has a panel.
    const inPanels = used(panelExpressions(dashboard()));
    const families = [...text.matchAll(/^# TYPE ([\w:]+) /gm)].map((m) => m[1]!);
    const own = families.filter((f) => !/^(nodejs|process)_/.test(f));
    const shown = own.filter((f) => inPanels.some((n) => n === f || n.replace(/_(bucket|sum|count)$/, '') === f));
    assert.equal(shown, own, 'grafana-dashboard.json: a panel for each of the service metrics');
  } finally {
    await app.worker.stop();
  }
});

test.run();
