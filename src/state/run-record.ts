/**
 * The run record: the format of a run ref `PREFIX/ENV/runs/RUN`, in one
 * place for everyone who reads or writes it (the lease protocol, runs, importers, status).
 *
 * A run ref's tree holds `run.yaml` (who runs what, and the run's deadline, renewed with the
 * lease) and one `units/BB/NAME.yaml` per unit the run started: the started marker (written before
 * the driver runs) and, once the unit ended, its `checkpoint`. Each write is a child commit, so
 * the ref's history is the run's log.
 *
 * BB, two hex digits of the name's SHA-1, spreads the files over up to 256 directories: a run
 * writes a commit per group of checkpoints, and each commit rewrites only the directories it
 * touches, so a run of 5,000 units does not write a 5,000-entry tree a few hundred times. Records
 * of older versions (`units/NAME.yaml`) are still read.
 */
import type { ProcessIdentity } from '../util/process-identity';
import { createHash } from 'node:crypto';
import { byCodeUnits } from '../util/compare';
import { type Damage, damageOf } from './damage';
import { type ConditionRecord, type DesiredUnitDoc, type ReceiptRecord, type SensitiveOutputRecord, toYaml } from './documents';
import { runsPrefix, type StateLocation } from './location';
import { parseStateDocument } from './parse';
import { type GitObject, parseTree, type TreeEntry } from '../git/batch-reader';
import type { ObjectReader, RefSnapshot } from './store';

export interface RunHolder extends ProcessIdentity {
  /** The identity that runs the operation, "Name <email>". */
  name: string;
}

export interface RunDoc {
  apiVersion: string;
  kind: 'Run';
  run: string;
  environment: string;
  operation: string;
  holder: RunHolder;
  startedAt: string;
  /** ISO time with milliseconds; moves with the lease's deadline while the run lives. */
  deadline: string;
  /** When the lease was last renewed (the holder's clock), moved with the deadline. */
  renewedAt?: string;
  source: string;
  sourceOverride?: boolean;
  /** Set when the run ended without its transition commit (cancelled, lease lost, error). */
  ended?: { at: string; reason: string };
}

/** removed: a teardown ended and its unit is gone (its records go with it). */
type CheckpointResult = 'receipt' | 'removed' | 'failed' | 'uncertain' | 'not-started';

export interface Checkpoint {
  result: CheckpointResult;
  finishedAt: string;
  outputs?: Record<string, unknown>;
  /** Each sensitive output's digest (and seal): the values themselves are never written to Git in plain text. */
  sensitiveOutputs?: Record<string, SensitiveOutputRecord>;
  /** A receipt's record of the tool's own state (also of a failed or uncertain attempt's), and the source paths the tool read (ReceiptRecord). */
  toolState?: Record<string, unknown>;
  toolReads?: string[];
  reason?: string;
  retryable?: boolean;
  acknowledgementRequired?: boolean;
  /** removed with --allow-incomplete: the driver could not claim the removal. */
  incomplete?: boolean;
  /** The code of a failure that has one (NYL-TEARDOWN-INCOMPLETE). */
  code?: string;
  /** Failed or uncertain: the last lines of the tool's output, masked, for the condition. */
  output?: string[];
}

export interface RunUnitDoc {
  unit: string;
  uid: string;
  kind: string;
  executionKey: string;
  startedAt: string;
  /** teardown: the unit's driver removes it; absent for an execution. */
  phase?: 'teardown';
  /** The desired document the unit executes for (becomes the receipt's copy), or the one it is torn down from. */
  desired: DesiredUnitDoc;
  checkpoint?: Checkpoint;
}

/**
 * The receipt a unit's receipt checkpoint stands for, as the observed branch records it (an
 * import, `recover --accept`): sensitive outputs keep only their digests.
 */
export function receiptOf(run: string, doc: Pick<RunUnitDoc, 'executionKey' | 'desired'>, cp: Checkpoint): ReceiptRecord {
  const receipt: ReceiptRecord = { run, executionKey: doc.executionKey, finishedAt: cp.finishedAt, outputs: cp.outputs ?? {}, desired: doc.desired };
  if (cp.sensitiveOutputs) receipt.sensitiveOutputs = cp.sensitiveOutputs;
  if (cp.toolState) receipt.toolState = cp.toolState;
  if (cp.toolReads && cp.toolReads.length > 0) receipt.toolReads = cp.toolReads;
  return receipt;
}

/** The condition a failed or uncertain checkpoint stands for (the run's own record, an import). */
export function conditionOf(run: string, cp: Checkpoint): ConditionRecord {
  const type = cp.result === 'uncertain' ? 'uncertain' : 'failed';
  const condition: ConditionRecord = {
    type,
    retryable: type === 'failed' ? (cp.retryable ?? true) : false,
    reason: cp.reason ?? type,
    run,
    since: cp.finishedAt,
  };
  if (cp.acknowledgementRequired) condition.acknowledgementRequired = true;
  if (cp.code) condition.code = cp.code;
  if (cp.output && cp.output.length > 0) condition.output = cp.output;
  if (cp.toolState) condition.toolState = cp.toolState;
  return condition;
}

/**
 * A run ref as an importer or status reads it. Damaged records are left out of `units` and listed
 * in `damage`: a damaged run.yaml (or a ref that is no run commit) makes the whole run damaged.
 * A unit's teardown has a record of its own (`teardowns`): a kind change tears the old
 * incarnation down and executes the new one in the same run, and both must survive a crash.
 */
export interface RecordedRun {
  run: string;
  ref: string;
  oid: string;
  doc?: RunDoc;
  units: Map<string, RunUnitDoc>;
  teardowns: Map<string, RunUnitDoc>;
  damage: Damage[];
}

/** A run ref with only its run.yaml read: enough to tell a live run from a dead one. */
interface RunHeader {
  run: string;
  ref: string;
  oid: string;
  /** Absent when run.yaml is damaged: nobody can tell whether such a run lives. */
  doc?: RunDoc;
  damage?: Damage;
}

/** Is the whole run damaged (its run.yaml, or the ref itself), not only some unit records? */
export function runDamaged(run: RecordedRun): boolean {
  return run.damage.some((d) => d.document === 'run');
}

export function runRefName(loc: StateLocation, run: string): string {
  return `${runsPrefix(loc)}${run}`;
}

const unitFiles = new Map<string, string>();

/** The suffix of a teardown's record: unit names never hold a dot, so it cannot be a unit's own. */
const TEARDOWN_SUFFIX = '.teardown';

/** The path of a unit's record in a run ref: its execution's, or its teardown's. */
export function unitFile(name: string, phase?: 'teardown'): string {
  const key = phase ? `${name}${TEARDOWN_SUFFIX}` : name;
  let file = unitFiles.get(key);
  if (!file) {
    file = `units/${createHash('sha1').update(name).digest('hex').slice(0, 2)}/${key}.yaml`;
    unitFiles.set(key, file);
  }
  return file;
}

/** Where older versions kept a unit's record. */
function flatUnitFile(name: string): string {
  return `units/${name}.yaml`;
}

export function serializeRunDoc(doc: RunDoc): string {
  return toYaml(doc);
}

export function serializeRunUnit(doc: RunUnitDoc): string {
  return toYaml(doc);
}

/**
 * A started marker's record with its checkpoint, from the marker's text: `checkpoint` sorts
 * before every other key of the record, so it is the checkpoint's YAML followed by the marker's
 * (the same text serializeRunUnit gives, without emitting the desired document again).
 */
export function withCheckpoint(markerText: string, checkpoint: Checkpoint): string {
  return toYaml({ checkpoint }) + markerText;
}

/** True while the run may still be running: not ended, and its deadline (plus skew) not passed. */
export function runIsLive(doc: RunDoc, nowMs: number, skewMs: number): boolean {
  return !doc.ended && Date.parse(doc.deadline) + skewMs > nowMs;
}

function runRefsOf(loc: StateLocation, refs: RefSnapshot, exclude?: string): { run: string; ref: string; oid: string }[] {
  const prefix = runsPrefix(loc);
  return [...refs]
    .filter(([ref]) => ref.startsWith(prefix) && ref.slice(prefix.length) !== exclude)
    .map(([ref, oid]) => ({ run: ref.slice(prefix.length), ref, oid }))
    .sort((a, b) => byCodeUnits(a.run, b.run));
}

/** run.yaml of a run commit as read: the document, or damage (a missing run.yaml, or no commit at all). */
async function runDocOf(reader: ObjectReader, found: { ref: string; oid: string }, blob: GitObject | undefined): Promise<{ doc?: RunDoc; damage?: Damage }> {
  const at = { ref: found.ref, object: found.oid };
  if (!blob) {
    const target = await reader.read(found.oid);
    const problem = target && target.type !== 'commit' ? `the ref points at a ${target.type}, not a commit` : 'the run commit holds no run.yaml';
    return { damage: damageOf('run', target?.type === 'commit' ? { ...at, path: 'run.yaml' } : at, { problem }) };
  }
  const parsed = parseStateDocument<RunDoc>('run', blob.content.toString());
  return parsed.ok ? { doc: parsed.value } : { damage: damageOf('run', { ...at, path: 'run.yaml' }, parsed.flaw) };
}

/** Reads only run.yaml of every run ref, oldest run first (run ids are UUIDv7). */
export async function readRunHeaders(reader: ObjectReader, loc: StateLocation, refs: RefSnapshot): Promise<RunHeader[]> {
  const found = runRefsOf(loc, refs);
  if (found.length === 0) return [];
  const blobs = await reader.readMany(found.map((f) => `${f.oid}:run.yaml`));
  return Promise.all(found.map(async (f, i) => ({ ...f, ...(await runDocOf(reader, f, blobs[i])) })));
}

/** The unit record files of a `units` tree: in its directories, and flat (older versions). */
async function unitRecordFiles(reader: ObjectReader, unitsTree: TreeEntry[]): Promise<(TreeEntry & { dir?: string })[]> {
  const dirs = unitsTree.filter((e) => e.type === 'tree');
  const nested = await reader.readMany(dirs.map((d) => d.oid));
  const inDirs = nested.flatMap((t, i) => (t?.type === 'tree' ? parseTree(t.content).map((e) => ({ ...e, dir: dirs[i]!.name })) : []));
  return [...unitsTree, ...inDirs].filter((e) => e.type === 'blob' && e.name.endsWith('.yaml'));
}

/** The path of a unit record file found in a `units` tree (in its directory, or flat). */
function recordPath(file: TreeEntry & { dir?: string }): string {
  return file.dir ? `units/${file.dir}/${file.name}` : `units/${file.name}`;
}

async function readRunCommit(reader: ObjectReader, found: { run: string; ref: string; oid: string }): Promise<RecordedRun> {
  const [runBlob, unitsTree] = await Promise.all([reader.read(`${found.oid}:run.yaml`), reader.readTree(`${found.oid}:units`)]);
  const files = await unitRecordFiles(reader, unitsTree ?? []);
  const blobs = await reader.readMany(files.map((f) => f.oid));
  const recorded: RecordedRun = { ...found, units: new Map(), teardowns: new Map(), damage: [] };
  const header = await runDocOf(reader, found, runBlob);
  if (header.doc) recorded.doc = header.doc;
  if (header.damage) recorded.damage.push(header.damage);
  files.forEach((f, i) => {
    const b = blobs[i];
    if (!b) return;
    const base = f.name.slice(0, -'.yaml'.length);
    const teardown = base.endsWith(TEARDOWN_SUFFIX);
    const unit = teardown ? base.slice(0, -TEARDOWN_SUFFIX.length) : base;
    const parsed = parseStateDocument<RunUnitDoc>('run-unit', b.content.toString());
    if (parsed.ok) (teardown ? recorded.teardowns : recorded.units).set(unit, parsed.value);
    else recorded.damage.push(damageOf('run-unit', { ref: found.ref, object: found.oid, path: recordPath(f), unit }, parsed.flaw));
  });
  return recorded;
}

/** Every run ref of the environment except `exclude`, with its unit records, oldest run first. */
export async function readRecordedRuns(reader: ObjectReader, loc: StateLocation, refs: RefSnapshot, exclude?: string): Promise<RecordedRun[]> {
  return Promise.all(runRefsOf(loc, refs, exclude).map((f) => readRunCommit(reader, f)));
}

/**
 * One unit's record in a run or evidence commit: the document, damage, or neither (no record).
 * Its execution's record, else its teardown's (a run that did both wrote the teardown first).
 */
export async function readRunUnitRecord(reader: ObjectReader, ref: string, oid: string, unit: string): Promise<{ doc?: RunUnitDoc; damage?: Damage }> {
  const paths = [unitFile(unit), flatUnitFile(unit), unitFile(unit, 'teardown')];
  const blobs = await reader.readMany(paths.map((p) => `${oid}:${p}`));
  const i = blobs.findIndex((b) => b !== undefined);
  if (i < 0) return {};
  const parsed = parseStateDocument<RunUnitDoc>('run-unit', blobs[i]!.content.toString());
  if (parsed.ok) return { doc: parsed.value };
  return { damage: damageOf('run-unit', { ref, object: oid, path: paths[i]!, unit }, parsed.flaw) };
}

/** Reads one unit's record from a run or evidence commit; a damaged record reads as none. */
export async function readRunUnit(reader: ObjectReader, oid: string, unit: string): Promise<RunUnitDoc | undefined> {
  return (await readRunUnitRecord(reader, oid, oid, unit)).doc;
}
