import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { architecture } from './support.ts';

// docs/architecture.md: every diagram is Mermaid that GitHub can draw.
const test = suite('the architecture guide: its diagrams');

const DIAGRAM_TYPES = /^(?:(?:flowchart|graph) (?:TB|TD|BT|RL|LR)|sequenceDiagram)$/;

/**
 * What Mermaid would refuse, or draw other than meant, in a flowchart: every label is quoted, nothing else is free
 * text.
 */
function flowchartProblems(lines: string[]): string[] {
  const SHAPES = ['[""]', '("")', '{""}', '([""])', '((""))', '[[""]]', '{{""}}', '>""]', '[("")]'];
  const TOKEN = new RegExp(
    `^(?:[A-Za-z_]\\w*(?:${SHAPES.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})?|-->|---|-\\.->|==>|<-->|\\|""\\||&)`,
  );
  const problems: string[] = [];
  for (const line of lines) {
    if (/^(?:end|direction (?:TB|TD|BT|RL|LR)|(?:classDef|class|style|linkStyle) .+)$/.test(line)) continue;
    if ((line.match(/"/g) ?? []).length % 2 !== 0) {
      problems.push(`unbalanced quotes: ${line}`);
      continue;
    }
    const bare = line.replace(/"[^"]*"/g, '""');
    if (/^subgraph [A-Za-z_]\w*(?:\[""\])?$/.test(bare)) continue;
    let rest = bare.trim();
    while (rest.length > 0) {
      const token = TOKEN.exec(rest);
      if (!token || /^end\b/.test(rest)) {
        problems.push(`not a flowchart statement (labels must be quoted): ${line}`);
        break;
      }
      rest = rest.slice(token[0].length).trimStart();
    }
  }
  return problems;
}

/** The same for a sequence diagram: known statements, declared participants, blocks closed, no `;` or `#` in text. */
function sequenceProblems(lines: string[]): string[] {
  const problems: string[] = [];
  const participants = new Set<string>();
  const open: string[] = [];
  const known = (id: string, line: string) => {
    if (!participants.has(id)) problems.push(`undeclared participant ${id}: ${line}`);
  };
  for (const line of lines) {
    if (/[;#]/.test(line)) {
      problems.push(`";" or "#" in a sequence diagram: ${line}`);
      continue;
    }
    let m: RegExpExecArray | null;
    if (line === 'autonumber') continue;
    if ((m = /^(?:participant|actor) ([A-Za-z_]\w*)(?: as .+)?$/.exec(line))) {
      participants.add(m[1]!);
      continue;
    }
    if ((m = /^Note (?:over|left of|right of) ([A-Za-z_]\w*)(?:,([A-Za-z_]\w*))?: .+$/.exec(line))) {
      known(m[1]!, line);
      if (m[2]) known(m[2], line);
      continue;
    }
    if ((m = /^(loop|alt|opt|par|critical|break|rect)\b.*$/.exec(line))) {
      open.push(m[1]!);
      continue;
    }
    if ((m = /^(else|and|option)\b.*$/.exec(line))) {
      const inside = { else: 'alt', and: 'par', option: 'critical' }[m[1] as 'else' | 'and' | 'option'];
      if (open.at(-1) !== inside) problems.push(`${m[1]} outside ${inside}: ${line}`);
      continue;
    }
    if (line === 'end') {
      if (!open.pop()) problems.push('an end without a block');
      continue;
    }
    if ((m = /^(?:activate|deactivate) ([A-Za-z_]\w*)$/.exec(line))) {
      known(m[1]!, line);
      continue;
    }
    if ((m = /^([A-Za-z_]\w*) ?(?:->>|-->>|->|-->|-x|--x|-\)|--\))[+-]? ?([A-Za-z_]\w*): .+$/.exec(line))) {
      known(m[1]!, line);
      known(m[2]!, line);
      continue;
    }
    problems.push(`not a sequence diagram statement: ${line}`);
  }
  if (open.length > 0) problems.push(`blocks left open: ${open.join(', ')}`);
  return problems;
}

function mermaidProblems(code: string): string[] {
  const lines = code
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('%%'));
  const [type, ...body] = lines;
  if (!type || !DIAGRAM_TYPES.test(type)) return [`not a flowchart or sequence diagram: ${type}`];
  if (body.length === 0) return ['an empty diagram'];
  return type === 'sequenceDiagram' ? sequenceProblems(body) : flowchartProblems(body);
}

test('docs/architecture.md: Mermaid diagrams of the layers, a request, an event, a brand command and the feed; nothing else in code blocks', () => {
  const fences = [...architecture.matchAll(/^```(\w*)$/gm)].map((m) => m[1]).filter((_, i) => i % 2 === 0);
  assert.equal(
    fences.filter((lang) => lang !== 'mermaid'),
    [],
    'code blocks other than diagrams',
  );
  const diagrams = [...architecture.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.ok(diagrams.length >= 5, `${diagrams.length} diagrams`);
  assert.ok(diagrams.filter((d) => d.startsWith('sequenceDiagram')).length >= 4, 'the sequence diagrams');
  assert.ok(
    diagrams.some((d) => /^(flowchart|graph) /.test(d)),
    'the layers',
  );
  assert.equal(
    diagrams.flatMap((d, i) => mermaidProblems(d).map((p) => `diagram ${i + 1}: ${p}`)),
    [],
  );
});

test('the diagram checks do catch what Mermaid refuses', () => {
  assert.equal(mermaidProblems('flowchart LR\n  a["x"] --> b["y"]\n  a -->|"z"| b'), []);
  assert.ok(mermaidProblems('flowchart LR\n  a[foo (bar)] --> b').length > 0);
  assert.ok(mermaidProblems('flowchart LR\n  a["x"] --> end').length > 0);
  assert.ok(mermaidProblems('sequenceDiagram\n  participant A\n  A->>B: hello').length > 0);
  assert.ok(mermaidProblems('sequenceDiagram\n  participant A\n  loop forever\n  A->>A: again').length > 0);
  assert.ok(mermaidProblems('sequenceDiagram\n  participant A\n  A->>A: one; two').length > 0);
  assert.ok(mermaidProblems('pie\n  "a": 1').length > 0);
  assert.equal(
    mermaidProblems(
      'sequenceDiagram\n  participant A as a (b)\n  alt x\n  A-->>A: y\n  else z\n  Note over A: w\n  end',
    ),
    [],
  );
});

test.run();
