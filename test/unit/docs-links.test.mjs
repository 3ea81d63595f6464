// Every relative link of the docs resolves: in README.md, CONTRIBUTING.md and docs/*.md, a link
// to a file names one that exists, and a link with an anchor (#x, or page.md#x) names a heading of
// that page, with GitHub's anchor rules. A page that opens with a table of contents lists every
// one of its "## " sections there, so that a section cannot be added and left out of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The page's lines outside fenced code blocks, with their 1-based line numbers. */
function proseLines(markdown) {
  const lines = [];
  let fence;
  for (const [i, line] of markdown.split('\n').entries()) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (open && (fence === undefined || open[1].startsWith(fence))) {
      fence = fence === undefined ? open[1] : undefined;
      continue;
    }
    if (fence === undefined) lines.push({ line, number: i + 1 });
  }
  return lines;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats. */
export function anchors(markdown) {
  const seen = new Map();
  const result = new Set();
  for (const { line } of proseLines(markdown)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const text = h[1].replace(/<[^>]+>/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

/** The page's links: { target, number } for every [text](target) and ![alt](target) outside code. */
export function links(markdown) {
  const found = [];
  for (const { line, number } of proseLines(markdown)) {
    const prose = line.replace(/(`+)[^`]*?\1/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) found.push({ target: m[1], number });
  }
  return found;
}

/** Problems with the relative links of one page: "file:line: target: why". */
export function brokenLinks(file, markdown, read) {
  const problems = [];
  for (const { target, number } of links(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, anchor] = target.split('#');
    const resolved = pathPart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart));
    const text = read(resolved);
    if (text === undefined) {
      problems.push(`${file}:${number}: ${target}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (text === null || !resolved.endsWith('.md')) problems.push(`${file}:${number}: ${target}: an anchor into a file that is not a Markdown page`);
    else if (!anchors(text).has(anchor)) problems.push(`${file}:${number}: ${target}: no heading with this anchor`);
  }
  return problems;
}

/** The "## " sections a page's table of contents (the links to its own anchors before its first "## ") leaves out. */
export function missingFromContents(markdown) {
  const lines = proseLines(markdown);
  const first = lines.findIndex(({ line }) => line.startsWith('## '));
  if (first < 0) return [];
  const listed = new Set(lines.slice(0, first).flatMap(({ line }) => [...line.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1])));
  if (listed.size === 0) return [];
  const sections = [
    ...anchors(
      lines
        .filter(({ line }) => /^#{1,2}\s/.test(line))
        .map(({ line }) => line)
        .join('\n'),
    ),
  ];
  return lines
    .filter(({ line }) => line.startsWith('## '))
    .map(({ line }) => line)
    .filter((_, i) => !listed.has(sections[i + 1]));
}

/** Reads a repository file: its text, null for a directory or a file that is not text we check, undefined when missing. */
function readRepo(rel) {
  const full = path.join(ROOT, rel);
  if (!fs.existsSync(full)) return undefined;
  return fs.statSync(full).isFile() && rel.endsWith('.md') ? fs.readFileSync(full, 'utf8') : null;
}

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

test('every relative link and anchor of README.md, CONTRIBUTING.md and docs/*.md resolves', () => {
  assert.ok(PAGES.length >= 10, `the pages were found: ${PAGES.join(', ')}`);
  const problems = PAGES.flatMap((page) => brokenLinks(page, readRepo(page), readRepo));
  assert.deepEqual(problems, []);
});

test('a table of contents lists every section of its page', () => {
  const problems = PAGES.flatMap((page) => missingFromContents(readRepo(page)).map((h) => `${page}: ${h}`));
  assert.deepEqual(problems, []);
});

test('checker: anchors follow GitHub (punctuation, code, repeats), and broken files and anchors are found', () => {
  const page =
    '# T\n\n- [A](#run-the-units-nyl-reconcile)\n\n## Run the units: `nyl reconcile`\n\n## Trying a change: `--worktree`\n\n### Notes\n\n### Notes\n';
  assert.deepEqual([...anchors(page)], ['t', 'run-the-units-nyl-reconcile', 'trying-a-change---worktree', 'notes', 'notes-1']);
  const files = { 'docs/a.md': page, 'docs/b.md': '# B\n', 'schemas/x.json': null };
  const text =
    '# T\nsee [a](a.md#notes-1), [x](../schemas/x.json), [web](https://example.com/#x), `[no](link.md)`\n```\n[no](code.md)\n```\n[b](b.md#nope) [c](c.md) [self](#t) [bad](#u)\n';
  files['docs/t.md'] = text;
  assert.deepEqual(
    brokenLinks('docs/t.md', text, (f) => files[f]),
    ['docs/t.md:6: b.md#nope: no heading with this anchor', 'docs/t.md:6: c.md: no such file', 'docs/t.md:6: #u: no heading with this anchor'],
  );
  assert.deepEqual(missingFromContents(page), ['## Trying a change: `--worktree`']);
});
