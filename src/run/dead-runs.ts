/**
 * Reads the run refs earlier runs left behind (`PREFIX/ENV/runs/RUN`) and the evidence refs a
 * takeover kept (`PREFIX/ENV/evidence/UNIT/RUN`), through the batch reader.
 */
import { byCodeUnits } from '../util/compare';
import { fromYaml } from '../state/documents';
import { evidencePrefix, runsPrefix } from '../state/location';
import type { RefSnapshot, StateStore } from '../state/store';
import type { RunDoc, RunUnitDoc } from './run-record';

export interface RecordedRun {
  run: string;
  ref: string;
  oid: string;
  doc?: RunDoc;
  units: Map<string, RunUnitDoc>;
}

export interface EvidenceRef {
  unit: string;
  run: string;
  ref: string;
  oid: string;
}

async function readRunCommit(store: StateStore, run: string, ref: string, oid: string): Promise<RecordedRun> {
  const [runBlob, unitsTree] = await Promise.all([store.reader.read(`${oid}:run.yaml`), store.reader.readTree(`${oid}:units`)]);
  const units = new Map<string, RunUnitDoc>();
  const files = (unitsTree ?? []).filter((e) => e.type === 'blob' && e.name.endsWith('.yaml'));
  const blobs = await store.reader.readMany(files.map((f) => f.oid));
  files.forEach((f, i) => {
    const b = blobs[i];
    if (b) units.set(f.name.slice(0, -'.yaml'.length), fromYaml<RunUnitDoc>(b.content.toString()));
  });
  const recorded: RecordedRun = { run, ref, oid, units };
  if (runBlob) recorded.doc = fromYaml<RunDoc>(runBlob.content.toString());
  return recorded;
}

/** Every run ref of the environment except `exclude`, oldest run first (run ids are UUIDv7). */
export async function readRecordedRuns(store: StateStore, refs: RefSnapshot, exclude?: string): Promise<RecordedRun[]> {
  const prefix = runsPrefix(store.loc);
  const found = [...refs]
    .filter(([ref]) => ref.startsWith(prefix) && ref.slice(prefix.length) !== exclude)
    .map(([ref, oid]) => ({ run: ref.slice(prefix.length), ref, oid }))
    .sort((a, b) => byCodeUnits(a.run, b.run));
  return Promise.all(found.map((f) => readRunCommit(store, f.run, f.ref, f.oid)));
}

export function evidenceRefs(store: StateStore, refs: RefSnapshot): EvidenceRef[] {
  const prefix = evidencePrefix(store.loc);
  const out: EvidenceRef[] = [];
  for (const [ref, oid] of refs) {
    if (!ref.startsWith(prefix)) continue;
    const [unit, run] = ref.slice(prefix.length).split('/');
    if (unit && run) out.push({ unit, run, ref, oid });
  }
  return out;
}

export function evidenceRefName(store: StateStore, unit: string, run: string): string {
  return `${evidencePrefix(store.loc)}${unit}/${run}`;
}

/** Reads one unit's checkpoint document from a run or evidence commit. */
export async function readRunUnit(store: StateStore, oid: string, unit: string): Promise<RunUnitDoc | undefined> {
  const b = await store.reader.read(`${oid}:units/${unit}.yaml`);
  return b ? fromYaml<RunUnitDoc>(b.content.toString()) : undefined;
}
