// The registry (src/cli/registry.ts) is the single source of what the CLI knows about a
// command: every entry has its help, its completion, a report kind for its `-o json` refusals and
// a run, each command is listed once, and no file of src/cli spells a command's name as a string
// (a `case 'status':` or `=== 'graph'` would be a second table). The name check is tested on
// fixtures, so that it cannot pass by finding nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { COMMANDS } from '../../dist/cli/registry.js';
import { refusalOperationOf } from '../../dist/commands/command.js';
import { commandHelp, mainHelp } from '../../dist/cli/help.js';
import { completion } from '../../dist/cli/completion.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The report kinds the JSON Schemas in schemas/ declare. */
function schemaKinds() {
  const dir = path.join(ROOT, 'schemas');
  const text = fs
    .readdirSync(dir)
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  return new Set([...text.matchAll(/"const": "([A-Za-z]+Report)"/g)].map((m) => m[1]));
}

async function completionScript(shell) {
  let text = '';
  const write = process.stdout.write;
  process.stdout.write = (chunk) => ((text += chunk), true);
  try {
    assert.equal(await completion(['completion', shell]), 0);
  } finally {
    process.stdout.write = write;
  }
  return text;
}

test('each command is listed once', () => {
  const names = COMMANDS.map((c) => c.words.join(' '));
  assert.deepEqual([...new Set(names)], names);
});

test('every command has its help, its completion, a report kind for -o json, and a run', async () => {
  const kinds = schemaKinds();
  const bash = await completionScript('bash');
  const fish = await completionScript('fish');
  const main = mainHelp('0.0.0');
  for (const c of COMMANDS) {
    const name = c.words.join(' ');
    assert.ok(commandHelp(c).startsWith(`nyl ${name}: ${c.summary}\n\nUsage: ${c.usage}\n`), name);
    assert.match(main, new RegExp(`\\n  ${name} +${c.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`), name);
    assert.ok(bash.includes(`    '${name}') opts='`), `bash: ${name}`);
    assert.ok(fish.includes(`__fish_seen_subcommand_from ${c.words.at(-1)}`), `fish: ${name}`);
    assert.ok(kinds.has(c.report), `${name}: report kind ${c.report} has a schema`);
    const operation = refusalOperationOf(c);
    assert.ok(operation === undefined || /^[a-z-]+$/.test(operation), `${name}: refusal operation ${operation}`);
    assert.equal(typeof c.execute, 'function', name);
  }
});

test('the commands across environments take -e, -l and -g, and only they do', () => {
  for (const c of COMMANDS) {
    const names = c.options.map((o) => o.name);
    assert.equal(names.includes('group'), names.includes('labels'), c.words.join(' '));
    if (names.includes('group')) assert.ok(names.includes('environment'), `${c.words.join(' ')} selects by -l and -g but not by -e`);
  }
});

/** The names of commands (and the operations their refusals name) that a source text spells as a whole string. */
function namesSpelled(fileName, text, names) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found = [];
  const visit = (node) => {
    // A literal type (`Pick<Runtime, 'log'>`) names a property, not a command.
    const literal = (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !ts.isLiteralTypeNode(node.parent);
    if (literal && names.has(node.text)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** Every command's name, first word and refusal operation: what a per-command branch would compare with. */
function commandNames() {
  const names = new Set();
  for (const c of COMMANDS) {
    names.add(c.words.join(' '));
    names.add(c.words[0]);
    const operation = refusalOperationOf(c);
    if (operation) names.add(operation);
  }
  return names;
}

function sourcesUnder(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourcesUnder(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

test('the name check finds a command spelled as a string, in every literal form', () => {
  const names = commandNames();
  assert.deepEqual(namesSpelled('x.ts', "if (spec.words[0] === 'graph') x();", names), ['graph']);
  assert.deepEqual(namesSpelled('x.ts', "switch (n) { case 'state init': case `status`: }", names), ['state init', 'status']);
  assert.deepEqual(namesSpelled('x.ts', "const op = 'forget'; // 'reconcile' in a comment is fine", names), ['forget']);
  assert.deepEqual(namesSpelled('x.ts', "const help = 'see nyl status --help'; const o = 'output';", names), []);
  assert.deepEqual(namesSpelled('x.ts', "type T = Pick<Runtime, 'log'>; const l = 'log';", names), ['log']);
});

test('no file of src/cli spells a command name: the CLI reads every command from the registry', () => {
  const names = commandNames();
  const cli = path.join(ROOT, 'src', 'cli');
  const found = sourcesUnder(cli).flatMap((file) =>
    namesSpelled(file, fs.readFileSync(file, 'utf8'), names).map((n) => `${path.relative(ROOT, file)}: '${n}'`),
  );
  assert.deepEqual(found, []);
});
