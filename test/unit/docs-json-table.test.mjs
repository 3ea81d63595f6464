// The JSON output table of docs/operations.md cannot drift from the CLI: the commands that take
// `-o json` and the report kind each prints come from the registry (src/cli/registry.ts), and the
// table must list exactly those commands, each in the row of its report kind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../../dist/cli/registry.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Whether a command's `-o` accepts json, however its option spec lists the values. */
function takesJson(command) {
  const output = command.options.find((o) => o.name === 'output');
  if (output === undefined) return false;
  const values = [output.value, ...(Array.isArray(output.values) ? output.values : [])].join(' ');
  return /\bjson\b/.test(values);
}

/** The table under "## JSON output": command name -> the report kind of its row. */
export function jsonTable(markdown) {
  const section = markdown.split(/^## JSON output$/m)[1]?.split(/^## /m)[0];
  assert.ok(section, 'docs/operations.md has a "## JSON output" section');
  const rows = new Map();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || cells[1] === 'command' || cells[1].startsWith('---')) continue;
    const kind = /`(\w+)`/.exec(cells[2])?.[1];
    for (const m of cells[1].matchAll(/`nyl ([a-z ]+)`/g)) {
      assert.ok(!rows.has(m[1]), `nyl ${m[1]} is listed twice`);
      rows.set(m[1], kind);
    }
  }
  return rows;
}

test('the JSON output table lists every command with -o json, in the row of the report kind it prints', () => {
  const table = jsonTable(fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8'));
  const expected = new Map(COMMANDS.filter(takesJson).map((c) => [c.words.join(' '), c.report]));
  assert.ok(expected.size >= 20, `the registry's -o json commands were found (${expected.size})`);
  assert.deepEqual(Object.fromEntries([...table].sort()), Object.fromEntries([...expected].sort()));
});

test('checker: the table reader finds commands per row and refuses a command listed twice', () => {
  const doc =
    '## JSON output\n\n| command | kind | schema |\n| --- | --- | --- |\n| `nyl a`, `nyl b c` | `XReport` | x |\n| `nyl d` | `YReport` | y |\n\n## Next\n| `nyl e` | `Z` | z |\n';
  assert.deepEqual(Object.fromEntries(jsonTable(doc)), { a: 'XReport', 'b c': 'XReport', d: 'YReport' });
  assert.throws(() => jsonTable(doc.replace('`nyl d`', '`nyl a`')), /listed twice/);
});
