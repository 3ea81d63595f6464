/**
 * Sensitive outputs in a run: sealing a producer's sensitive outputs for its receipt, and
 * resolving the sensitive values a consumer's execution needs.
 *
 * Recording: a driver that can read its outputs back (a module's backend: `readOutputs`) gets
 * only each value's digest recorded; any other driver's sensitive outputs are sealed with the
 * run's key ring (src/util/sealed.ts) next to their digest. Without a key, the unit fails with
 * NYL-SECRETS-KEY-MISSING: a sensitive value is never written to Git in plain text. A consumer's
 * own plain outputs that contain a value it consumed as sensitive become sensitive too.
 *
 * Resolving: a consumer's rendering keeps each reference to a sensitive output as written (the
 * rendering is committed); for the execution only, the reference is replaced by the value,
 * opened from the producer's receipt or read from its backend, and checked against the digest
 * the key was computed with. Every value resolved is masked in the unit's printed lines.
 */
import { createHash } from 'node:crypto';
import type { Driver, DriverContext, Failure, Outputs } from '../drivers/contract';
import { failure } from '../drivers/contract';
import type { UnitPlan } from '../plan/actions';
import { canonicalJson, type SecretRead } from '../project/execution-key';
import { secretReference } from '../project/render';
import { stringifyValue } from '../project/references';
import type { ObservedUnitDoc, ReceiptRecord, SensitiveOutputRecord } from '../state/documents';
import { configuredKeyTexts, type KeyRing, keyIdOf, type KeyRingProblem, keyRingFrom, type SealBinding } from '../util/sealed';

/**
 * The key ring of a run, made once, when a unit first needs it, and the environment its seals and
 * digests are bound to.
 */
export class RunKeys {
  private made: KeyRing | KeyRingProblem | undefined;
  private configured: string[] | undefined;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    readonly environment: string,
  ) {}

  ring(): KeyRing | KeyRingProblem {
    this.made ??= keyRingFrom(this.env);
    return this.made;
  }

  /** The configured key texts, masked in every line a unit prints and every reason kept. */
  texts(): string[] {
    // Read once per run: a key file is not read again for every unit.
    this.configured ??= configuredKeyTexts(this.env);
    return this.configured;
  }

  binding(unit: string, output: string): SealBinding {
    return { environment: this.environment, unit, output };
  }
}

/** The unkeyed digest of the first state format: still verified, never written. */
function legacyDigest(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

/** The digest state records of a value no key is configured for: the execution that produced it, nothing of the value. */
const EXECUTION_DIGEST = 'execution:';

function keyMissing(unit: string, what: string, problem: KeyRingProblem): Failure {
  const f = failure(`${unit} ${what}, but ${problem.problem}; nothing was written in plain text`, true);
  return { ...f, code: 'NYL-SECRETS-KEY-MISSING' };
}

/**
 * A unit whose outputs need a seal and that is known to have sensitive ones (its receipt recorded
 * some, or its last attempt failed for want of a key to seal them) fails before its tool runs
 * when no usable key is configured: run first, its new values could not be recorded and would be
 * lost, and the next run would repeat whatever the tool did (a rotated password).
 */
export function keyNeededFirst(unit: string, observed: ObservedUnitDoc | undefined, driver: Driver | undefined, keys: RunKeys): Failure | undefined {
  const known = observed?.receipt?.sensitiveOutputs !== undefined || observed?.condition?.code === 'NYL-SECRETS-KEY-MISSING';
  if (driver?.readOutputs || !known) return undefined;
  const ring = keys.ring();
  if (!('problem' in ring)) return undefined;
  return keyMissing(unit, 'recorded sensitive outputs, which its execution must seal again; it was not run', ring);
}

/** The ids of the keys that sealed, or made the keyed digests of, the values these receipts hold: the keys a run of them needs. */
export function sealingKeyIds(docs: Iterable<ObservedUnitDoc | undefined>): string[] {
  const ids = new Set<string>();
  for (const doc of docs)
    for (const entry of Object.values(doc?.receipt?.sensitiveOutputs ?? {})) {
      for (const id of [entry.sealed !== undefined ? keyIdOf(entry.sealed) : undefined, keyIdOf(entry.sha256)]) if (id) ids.add(id);
    }
  return [...ids].sort();
}

/**
 * The unit's own sealed outputs, opened: what it printed of them is masked, should it print its
 * previous value before it fails. A seal no key opens is left out (nothing to mask it with).
 */
function ownSealedValues(unit: string, observed: ObservedUnitDoc | undefined, keys: RunKeys): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const ring = keys.ring();
  if ('problem' in ring) return values;
  for (const [name, entry] of Object.entries(observed?.receipt?.sensitiveOutputs ?? {})) {
    const opened = entry.sealed === undefined ? undefined : ring.open(keys.binding(unit, name), entry.sealed);
    if (opened?.ok) values.set(sealName(unit, name), opened.value);
  }
  return values;
}

/**
 * Everything masked in a unit's lines and reasons: the values it consumes, its own previous sealed
 * values (it may print them), and the key ring's texts.
 */
export function unitMaskTexts(unit: string, consumed: ReadonlyMap<string, unknown>, observed: ObservedUnitDoc | undefined, keys: RunKeys): string[] {
  return [...maskTexts(consumed), ...maskTexts(ownSealedValues(unit, observed, keys)), ...keys.texts()];
}

/** The sensitive values of outputs a failed execution wrote: masked, never recorded. */
export function sensitiveValues(outputs: Outputs): Map<string, unknown> {
  return new Map(
    Object.entries(outputs)
      .filter(([, o]) => o.sensitive)
      .map(([name, o]) => [name, o.value]),
  );
}

/** The recorded form of outputs: plain values, and per sensitive output its digest (and seal). */
export interface RecordedOutputs {
  outputs: Record<string, unknown>;
  sensitiveOutputs?: Record<string, SensitiveOutputRecord>;
  /** What the driver recorded beside the outputs (ApplyOutcome): carried to the receipt as it is. */
  toolState?: Record<string, unknown>;
  toolReads?: string[];
}

/** Does this JSON text hold one of the values? (Empty and very short values are not looked for.) */
function holdsAny(value: unknown, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text !== undefined && secrets.some((s) => text.includes(s));
}

/**
 * A receipt's outputs as state records them, or the unit's failure when a sensitive value needs a
 * seal and no key is configured. `consumed`: the sensitive values the execution was given.
 * A sensitive output's digest is keyed (src/util/sealed.ts). Without any key configured, a value
 * its tool keeps (a module's backend) is recorded by the execution that produced it instead: a
 * plain hash would let anyone who reads state test guesses, and a slow salted one only slows
 * that down for the short, guessable values that need it most. Its consumers then run again
 * after every execution of the producer, not only when the value changed.
 */
export function recordOutputs(
  unit: string,
  run: string,
  outputs: Outputs,
  driver: Driver | undefined,
  keys: RunKeys,
  consumed: readonly string[] = [],
): RecordedOutputs | Failure {
  const recorded: RecordedOutputs = { outputs: {} };
  const sensitive: Record<string, SensitiveOutputRecord> = {};
  for (const [name, o] of Object.entries(outputs)) {
    if (!o.sensitive && !holdsAny(o.value, consumed)) {
      recorded.outputs[name] = o.value;
      continue;
    }
    const ring = keys.ring();
    const keeps = driver?.readOutputs !== undefined;
    if ('problem' in ring && !(keeps && ring.missing))
      return keyMissing(unit, `has the sensitive output ${name}, which must be ${keeps ? 'digested' : 'sealed'} for Git`, ring);
    const binding = keys.binding(unit, name);
    if ('problem' in ring) sensitive[name] = { sha256: `${EXECUTION_DIGEST}${run}` };
    else sensitive[name] = { sha256: ring.digest(binding, o.value), ...(keeps ? {} : { sealed: ring.seal(binding, o.value) }) };
  }
  if (Object.keys(sensitive).length > 0) recorded.sensitiveOutputs = sensitive;
  return recorded;
}

/** The key of a value among a consumer's resolved values: the producer and the output. */
function sealName(unit: string, output: string): string {
  return `${unit}.${output}`;
}

/** The sensitive references an execution or teardown resolves: those its rendering was made with. */
export function secretReadsOf(plan: UnitPlan): SecretRead[] {
  return (plan.action.type === 'teardown' ? plan.desired?.reads?.secrets : plan.reads?.secrets) ?? [];
}

/** Reads the outputs of a producer whose driver keeps them (its backend), for a consumer. */
export type ReadBack = (producer: string, receipt: ReceiptRecord) => Promise<Outputs | Failure>;

/** The values of a consumer's sensitive references, by `unit.output`; a failure when one cannot be had. */
export async function openSecrets(
  reads: readonly SecretRead[],
  observed: ReadonlyMap<string, ObservedUnitDoc>,
  keys: RunKeys,
  readBack: ReadBack,
): Promise<Map<string, unknown> | Failure> {
  const values = new Map<string, unknown>();
  const backends = new Map<string, Promise<Outputs | Failure>>();
  for (const read of reads) {
    const id = sealName(read.unit, read.output);
    if (values.has(id)) continue;
    const receipt = observed.get(read.unit)?.receipt;
    const entry = receipt?.sensitiveOutputs?.[read.output];
    if (!receipt || !entry) return unavailable(read, `${read.unit} has no receipt with the sensitive output ${read.output} any more`);
    const value = entry.sealed !== undefined ? openSealed(read, entry.sealed, keys) : await fromBackend(read, receipt, backends, readBack);
    if (isFailure(value)) return value;
    const planned = plannedWith(read, receipt, value.value, keys);
    if (planned !== true) return planned;
    values.set(id, value.value);
  }
  return values;
}

/** Is this the value the consumer's execution was planned with (its read's digest)? */
function plannedWith(read: SecretRead, receipt: ReceiptRecord, value: unknown, keys: RunKeys): true | Failure {
  const changed = unavailable(read, `the value of ${read.unit}.${read.output} is not the one this execution was planned with`);
  if (read.sha256.startsWith(EXECUTION_DIGEST)) return read.sha256 === `${EXECUTION_DIGEST}${receipt.run}` ? true : changed;
  if (read.sha256.startsWith('sha256:')) return legacyDigest(value) === read.sha256 ? true : changed;
  const ring = keys.ring();
  if ('problem' in ring) return keyMissing(read.unit, `has the sensitive output ${read.output} that this unit consumes, whose digest is keyed`, ring);
  const verified = ring.verify(keys.binding(read.unit, read.output), value, read.sha256);
  if (verified.problem) return unavailable(read, `its digest cannot be checked: ${verified.problem}`);
  return verified.ok ? true : changed;
}

function isFailure(x: unknown): x is Failure {
  return typeof x === 'object' && x !== null && (x as { result?: string }).result === 'failed';
}

function unavailable(read: SecretRead, why: string): Failure {
  return { ...failure(`cannot read the sensitive output ${read.output} of ${read.unit}: ${why}`, true), code: 'NYL-SECRET-UNAVAILABLE' };
}

function openSealed(read: SecretRead, sealed: string, keys: RunKeys): { value: unknown } | Failure {
  const ring = keys.ring();
  if ('problem' in ring) return keyMissing(read.unit, `has the sealed output ${read.output} that this unit consumes`, ring);
  const opened = ring.open(keys.binding(read.unit, read.output), sealed);
  return opened.ok ? { value: opened.value } : unavailable(read, opened.problem);
}

async function fromBackend(
  read: SecretRead,
  receipt: ReceiptRecord,
  backends: Map<string, Promise<Outputs | Failure>>,
  readBack: ReadBack,
): Promise<{ value: unknown } | Failure> {
  let outputs = backends.get(read.unit);
  if (!outputs) {
    outputs = readBack(read.unit, receipt);
    backends.set(read.unit, outputs);
  }
  const got = await outputs;
  if (isFailure(got)) return unavailable(read, got.reason);
  const output = got[read.output];
  return output ? { value: output.value } : unavailable(read, `its backend holds no output ${read.output}`);
}

/** The rendering an execution gets: each sensitive reference replaced by its value. */
function renderSecrets(rendering: Record<string, unknown>, reads: readonly SecretRead[], values: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const out = structuredClone(rendering);
  for (const pointer of new Set(reads.map((r) => r.pointer))) {
    const path = pointer
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], out) as
      | Record<string, unknown>
      | undefined;
    const key = path[path.length - 1]!;
    if (parent && typeof parent[key] === 'string')
      parent[key] = substitute(
        parent[key] as string,
        reads.filter((r) => r.pointer === pointer),
        values,
      );
  }
  return out;
}

/** One string: exactly a reference takes the value with its JSON type; inside text, its text. */
function substitute(text: string, reads: readonly SecretRead[], values: ReadonlyMap<string, unknown>): unknown {
  for (const r of reads) {
    const reference = secretReference(r.unit, r.output);
    const value = values.get(sealName(r.unit, r.output));
    if (text === reference) return value;
    text = text.split(reference).join(stringifyValue(value));
  }
  return text;
}

/** The texts to mask in printed lines: each value as a tool would see it (its text, or JSON). */
export function maskTexts(values: ReadonlyMap<string, unknown>): string[] {
  const texts = new Set<string>();
  for (const v of values.values()) {
    for (const t of [stringifyValue(v), JSON.stringify(v)]) if (t && t.length >= 3) texts.add(t);
  }
  return [...texts];
}

/** The text with every masked text replaced by `***`. */
export function maskText(text: string, texts: readonly string[]): string {
  let out = text;
  for (const t of texts) if (out.includes(t)) out = out.split(t).join('***');
  return out;
}

/** A teardown or execution context with the secrets in place and their pointers named. */
export function withSecretsIn(ctx: DriverContext, reads: readonly SecretRead[], values: ReadonlyMap<string, unknown>): DriverContext {
  if (reads.length === 0) return ctx;
  return { ...ctx, rendering: renderSecrets(ctx.rendering, reads, values), secretPointers: [...new Set(reads.map((r) => r.pointer))] };
}
