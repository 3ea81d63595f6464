// Runs the built CLI (bin/nyl) as a user would: a real process with a hermetic environment.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hermeticEnv, tempDir } from './git-fixtures.mjs';

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

/** Runs `nyl args...` in cwd and waits: { code, stdout, stderr, json }. */
export function nyl(cwd, args, { env = {}, input } = {}) {
  const r = spawnSync(process.execPath, [NYL, ...args], { cwd, env: cliEnv(env), encoding: 'utf8', input, maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return parse(r);
}

/** Starts `nyl args...` without waiting; returns { child, done: Promise<result> }. */
export function nylAsync(cwd, args, { env = {} } = {}) {
  const child = spawn(process.execPath, [NYL, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const done = new Promise((resolve) => child.on('close', (code, signal) => resolve(parse({ code, signal, stdout, stderr }))));
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
