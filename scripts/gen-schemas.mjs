#!/usr/bin/env node
// Writes schemas/source.schema.json from the source format's own schema DSL
// (src/project/schema.ts, sourceJsonSchema(): the source model's kinds, and each unit kind's spec
// fields from src/drivers/<kind>/spec.ts through the driver registry), so that the published JSON
// Schema and Nyl's validation can never disagree. Run it through `npm run schemas`, which builds dist/ first.
//
//   node scripts/gen-schemas.mjs           # write schemas/source.schema.json
//   node scripts/gen-schemas.mjs --check   # exit 1 when the file is missing or out of date
//
// The report schemas (status-report, state-operation-report, reconcile-report) are maintained by
// hand next to it; this script only checks that each of them parses and declares draft 2020-12.
// Plain ESM with Node built-ins only.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemaModule = join(root, 'dist', 'project', 'schema.js');
const target = join(root, 'schemas', 'source.schema.json');
const DRAFT = 'https://json-schema.org/draft/2020-12/schema';
const HAND_MAINTAINED = ['status-report.schema.json', 'state-operation-report.schema.json', 'reconcile-report.schema.json'];

const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((a) => a !== '--check');
if (unknown.length > 0) {
  process.stderr.write(`gen-schemas: unknown argument ${unknown.join(' ')}; usage: node scripts/gen-schemas.mjs [--check]\n`);
  process.exit(2);
}

if (!existsSync(schemaModule)) {
  process.stderr.write(`gen-schemas: ${relative(root, schemaModule)} is missing; run \`npm run build\` first (or \`npm run schemas\`)\n`);
  process.exit(1);
}

// dist/ is CommonJS; its exports arrive as the default export of the module namespace.
const { default: schema } = await import('../dist/project/schema.js');
const text = `${JSON.stringify(schema.sourceJsonSchema(), null, 2)}\n`;
const rel = relative(root, target);

let failed = false;
if (check) {
  const current = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
  if (current !== text) {
    process.stderr.write(`gen-schemas: ${rel} is ${current === undefined ? 'missing' : 'out of date'}; run \`npm run schemas\`\n`);
    failed = true;
  }
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote ${rel}\n`);
}

for (const name of HAND_MAINTAINED) {
  const file = join(root, 'schemas', name);
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    if (doc.$schema !== DRAFT) throw new Error(`$schema is ${JSON.stringify(doc.$schema)}, expected ${DRAFT}`);
  } catch (error) {
    process.stderr.write(`gen-schemas: schemas/${name}: ${error.message}\n`);
    failed = true;
  }
}

process.exit(failed ? 1 : 0);
