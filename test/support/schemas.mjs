// The published JSON Schemas of schemas/ under Ajv in its strictest mode: what the unit test of
// schemas/ compiles, and what the end-to-end tests validate every `-o json` document against.
// One place, so that both hold the schemas to the same rules.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const SCHEMAS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'schemas');
export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * Strict mode refuses what a lenient validator silently ignores (a keyword without the type it
 * applies to, a required name no `properties` declares, an unknown format); allErrors keeps every
 * error, so that a test shows all of them at once.
 */
export function strictAjv() {
  const ajv = new Ajv2020({ strict: true, strictRequired: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}

/** The file names of schemas/, sorted. */
export function schemaFileNames() {
  return fs
    .readdirSync(SCHEMAS_DIR)
    .filter((f) => f.endsWith('.schema.json'))
    .sort();
}

export function readSchema(file) {
  return JSON.parse(fs.readFileSync(path.join(SCHEMAS_DIR, file), 'utf8'));
}

let shared;
const compiled = new Map();
/**
 * The validator of schemas/<name>.schema.json, compiled once per process, by one Ajv instance:
 * each new instance compiles the draft's meta-schema again, which costs more than the schema.
 */
export function validatorOf(name) {
  shared ??= strictAjv();
  if (!compiled.has(name)) compiled.set(name, shared.compile(readSchema(`${name}.schema.json`)));
  return compiled.get(name);
}

/** Ajv's errors, one line each: where in the document, what, and the keyword's parameters. */
export function describeErrors(errors) {
  return (errors ?? []).map((e) => `  ${e.instancePath || '(document)'} ${e.message} ${JSON.stringify(e.params)} [${e.schemaPath}]`).join('\n');
}
