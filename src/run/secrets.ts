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
import type { ApplyOutcome, Driver, DriverContext, Failure, Outputs } from '../drivers/contract';
import { failure } from '../drivers/contract';
import type { UnitPlan } from '../plan/actions';
import { canonicalJson, type SecretRead } from '../project/execution-key';
import { secretReference } from '../project/render';
import { stringifyValue } from '../project/references';
import type { ObservedUnitDoc, ReceiptRecord, SensitiveOutputRecord } from '../state/documents';
import { type KeyRing, type KeyRingProblem, keyRingFrom } from '../util/sealed';

/** The digest a receipt records of a sensitive value (also what an execution key covers). */
export function sensitiveDigest(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

/** The key ring of a run, made once, when a unit first needs it. */
export class RunKeys {
  private made: KeyRing | KeyRingProblem | undefined;

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  ring(): KeyRing | KeyRingProblem {
    this.made ??= keyRingFrom(this.env);
    return this.made;
  }
}

function keyMissing(unit: string, what: string, problem: KeyRingProblem): Failure {
  const f = failure(`${unit} ${what}, but ${problem.problem}; nothing was written in plain text`, true);
  return { ...f, code: 'NYL-SECRETS-KEY-MISSING' };
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
 */
export function recordOutputs(unit: string, outputs: Outputs, driver: Driver | undefined, keys: RunKeys, consumed: readonly string[] = []): RecordedOutputs | Failure {
  const recorded: RecordedOutputs = { outputs: {} };
  const sensitive: Record<string, SensitiveOutputRecord> = {};
  for (const [name, o] of Object.entries(outputs)) {
    if (!o.sensitive && !holdsAny(o.value, consumed)) {
      recorded.outputs[name] = o.value;
      continue;
    }
    const entry: SensitiveOutputRecord = { sha256: sensitiveDigest(o.value) };
    if (!driver?.readOutputs) {
      const ring = keys.ring();
      if ('problem' in ring) return keyMissing(unit, `has the sensitive output ${name}, which must be sealed for Git`, ring);
      entry.sealed = ring.seal(sealName(unit, name), o.value);
    }
    sensitive[name] = entry;
  }
  if (Object.keys(sensitive).length > 0) recorded.sensitiveOutputs = sensitive;
  return recorded;
}

/** What a seal is bound to: the unit and the output. */
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
export async function openSecrets(reads: readonly SecretRead[], observed: ReadonlyMap<string, ObservedUnitDoc>, keys: RunKeys, readBack: ReadBack): Promise<Map<string, unknown> | Failure> {
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
    if (sensitiveDigest(value.value) !== read.sha256) return unavailable(read, `the value of ${read.unit}.${read.output} is not the one this execution was planned with`);
    values.set(id, value.value);
  }
  return values;
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
  const opened = ring.open(sealName(read.unit, read.output), sealed);
  return opened.ok ? { value: opened.value } : unavailable(read, opened.problem);
}

async function fromBackend(read: SecretRead, receipt: ReceiptRecord, backends: Map<string, Promise<Outputs | Failure>>, readBack: ReadBack): Promise<{ value: unknown } | Failure> {
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
export function renderSecrets(rendering: Record<string, unknown>, reads: readonly SecretRead[], values: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const out = structuredClone(rendering);
  for (const pointer of new Set(reads.map((r) => r.pointer))) {
    const path = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], out) as Record<string, unknown> | undefined;
    const key = path[path.length - 1]!;
    if (parent && typeof parent[key] === 'string') parent[key] = substitute(parent[key] as string, reads.filter((r) => r.pointer === pointer), values);
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

/** An apply's outcome with its outputs recorded: sealed, or the unit's failure. */
export type RecordedApply = { result: 'receipt'; recorded: RecordedOutputs } | Exclude<ApplyOutcome, { result: 'receipt' }>;

/** A teardown or execution context with the secrets in place and their pointers named. */
export function withSecretsIn(ctx: DriverContext, reads: readonly SecretRead[], values: ReadonlyMap<string, unknown>): DriverContext {
  if (reads.length === 0) return ctx;
  return { ...ctx, rendering: renderSecrets(ctx.rendering, reads, values), secretPointers: [...new Set(reads.map((r) => r.pointer))] };
}
