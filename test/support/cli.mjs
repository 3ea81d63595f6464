// Runs the built CLI (bin/nyl) as a user would: a real process with a hermetic environment.
//
// Every run that asks for -o json is held to the contract of JSON output: its stdout is exactly
// one JSON document, valid under the published schema of its command (schemas/, through Ajv in
// strict mode). A run that breaks it fails the test that made it, with Ajv's errors. Exempt are
// runs that could not finish: killed by a signal, or stopped at a fault point with
// NYL_FAULT_ACTION=exit; a test opts out of the check otherwise with { validateJson: false }.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hermeticEnv, tempDir } from './git-fixtures.mjs';
import { describeErrors, validatorOf } from './schemas.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const NYL = path.join(REPO_ROOT, 'bin', 'nyl');

let cacheDir;
/** One cache dir per test process, so the bare cache repositories of remotes are hermetic. */
export function cliEnv(extra = {}) {
  cacheDir ??= tempDir('nyl-cache-');
  return hermeticEnv({ NYL_CACHE_DIR: cacheDir, ...extra });
}

function parse(r) {
  const out = { code: r.status ?? r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  try {
    out.json = JSON.parse(r.stdout);
  } catch {
    out.json = undefined;
  }
  return out;
}

/** Did the command line ask for JSON, in any form the CLI accepts (as cli/dispatch.ts reads it)? */
export function asksForJson(args) {
  return args.some((a, i) => ((a === '-o' || a === '--output') && args[i + 1] === 'json') || ['-ojson', '-o=json', '--output=json'].includes(a));
}

/**
 * The schema of a command's document, by its first word as the CLI picks the report kind: status
 * and reconcile (teardown and plan too: a ReconcileReport; teardown --cancel a StateOperationReport) have their own, as have log, show and outputs; state init, state forget, state
 * delete, recover, lease break, hold, resume and a command line that names no command print a
 * StateOperationReport.
 */
export function schemaOfCommand(args) {
  if (args[0] === 'status') return 'status-report';
  if (args[0] === 'doctor') return 'doctor-host-report';
  if (args[0] === 'log' || args[0] === 'show' || args[0] === 'outputs' || args[0] === 'graph') return `${args[0]}-report`;
  // teardown --cancel withdraws requests: a state operation.
  if (args[0] === 'teardown' && args.includes('--cancel')) return 'state-operation-report';
  if (args[0] === 'reconcile' || args[0] === 'teardown' || args[0] === 'plan') return 'reconcile-report';
  return 'state-operation-report';
}

/** A run that could not finish owes no document: killed by a signal, or exited at a fault point. */
function stoppedEarly(result, env) {
  return Boolean(result.signal) || (env.NYL_FAULT_ACTION === 'exit' && result.code === 99);
}

/**
 * Throws unless a -o json run printed exactly one document that its command's schema accepts.
 * result: { code, signal, stdout, stderr, json } as parse() makes it; env: what the run added to
 * the environment (fault points). Returns result.
 */
export function checkJsonOutput(args, result, { env = {}, validateJson = true } = {}) {
  if (!validateJson || !asksForJson(args) || stoppedEarly(result, env)) return result;
  const where = `nyl ${args.join(' ')} (exit ${result.code})`;
  if (result.json === undefined || typeof result.json !== 'object' || result.json === null || Array.isArray(result.json)) {
    throw new Error(
      `${where}: -o json must print exactly one JSON document (an object) on stdout\nstdout: ${result.stdout.slice(0, 2000)}\nstderr: ${result.stderr.slice(-2000)}`,
    );
  }
  const name = schemaOfCommand(args);
  const validate = validatorOf(name);
  if (!validate(result.json)) {
    throw new Error(
      `${where}: the document does not validate against schemas/${name}.schema.json:\n${describeErrors(validate.errors)}\nstdout: ${result.stdout.slice(0, 4000)}`,
    );
  }
  return result;
}

/** Runs `nyl args...` in cwd and waits: { code, stdout, stderr, json }. */
export function nyl(cwd, args, { env = {}, input, validateJson = true } = {}) {
  const r = spawnSync(process.execPath, [NYL, ...args], { cwd, env: cliEnv(env), encoding: 'utf8', input, maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return checkJsonOutput(args, parse(r), { env, validateJson });
}

/**
 * Starts `nyl args...` without waiting; returns { child, done: Promise<result> }. done rejects
 * when the run breaks the contract of -o json (see checkJsonOutput).
 */
export function nylAsync(cwd, args, { env = {}, validateJson = true } = {}) {
  const child = spawn(process.execPath, [NYL, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const done = new Promise((resolve, reject) =>
    child.on('close', (code, signal) => {
      try {
        resolve(checkJsonOutput(args, parse({ code, signal, stdout, stderr }), { env, validateJson }));
      } catch (error) {
        reject(error);
      }
    }),
  );
  return { child, done };
}

/** Waits until a file exists (a fault point's pause marker), up to timeoutMs. */
export async function waitForFile(file, timeoutMs = 15000) {
  const until = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${file}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A multi-document nyl.yaml from resource objects written as YAML snippets. */
export function nylYaml(...docs) {
  return docs.map((d) => d.trim()).join('\n---\n') + '\n';
}

export function environment(name, specLines = '') {
  return `apiVersion: nyl.io/v1\nkind: Environment\nmetadata: {name: ${name}}\nspec:${specLines ? `\n${indent(specLines)}` : ' {}'}`;
}

export function command(name, specLines) {
  return `apiVersion: nyl.io/v1\nkind: Command\nmetadata: {name: ${name}}\nspec:\n${indent(specLines)}`;
}

function indent(text) {
  return text
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/** Error codes of a JSON report or of text output. */
export function codes(result) {
  if (result.json) return [...(result.json.errors ?? []), ...(result.json.warnings ?? [])].map((d) => d.code);
  return [...`${result.stdout}\n${result.stderr}`.matchAll(/^(?:error|warning|note) (NYL-[A-Z0-9-]+)/gm)].map((m) => m[1]);
}
