/**
 * A run's scratch space: the source commit unpacked once (on the first unit that needs it; a
 * teardown's own commit too) and
 * per-unit files, under one temporary directory removed when the run ends. Files and directories
 * per unit cost syscalls for every unit; most drivers need none, so they are made on demand.
 *
 * The directory is `$TMPDIR/nyl-run-<run>-XXXXXX` (mkdtemp's six characters), mode 0700: a run
 * killed before its end leaves it, and the importer of that run removes it (./dead-scratch.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The name of a run's scratch directory before mkdtemp's six random characters. */
export function scratchPrefix(runId: string): string {
  return `nyl-run-${runId}-`;
}

export class Workspace {
  private root: string | undefined;
  /** Unpacked commits: '' is the run's source commit. */
  private readonly sources = new Map<string, Promise<string>>();

  constructor(
    private readonly runId: string,
    /** Unpacks the source commit (or the given one) into the given directory; returns the project directory in it. */
    private readonly materialize: (dest: string, commit?: string) => Promise<string>,
  ) {}

  private dir(): string {
    this.root ??= mkdtempSync(join(tmpdir(), scratchPrefix(this.runId)));
    return this.root;
  }

  /** The project directory of the run's source commit, or of another commit (a teardown's), unpacked once each. */
  projectDir(commit = ''): Promise<string> {
    let dir = this.sources.get(commit);
    if (!dir) {
      dir = commit ? this.materialize(join(this.dir(), `source-${commit}`), commit) : this.materialize(join(this.dir(), 'source'));
      this.sources.set(commit, dir);
    }
    return dir;
  }

  outputsPath(unit: string): string {
    return join(this.dir(), `${unit}.outputs.json`);
  }

  scratchDir(unit: string): string {
    return mkdtempSync(join(this.dir(), `${unit}-`));
  }

  remove(): void {
    if (this.root) rmSync(this.root, { recursive: true, force: true });
  }
}
