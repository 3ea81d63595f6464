/**
 * A run's scratch space: the source commit unpacked once (on the first unit that needs it) and
 * per-unit files, under one temporary directory removed when the run ends. Files and directories
 * per unit cost syscalls for every unit; most drivers need none, so they are made on demand.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Workspace {
  private root: string | undefined;
  private source: Promise<string> | undefined;

  constructor(
    private readonly runId: string,
    /** Unpacks the source commit into the given directory; returns the project directory in it. */
    private readonly materialize: (dest: string) => Promise<string>,
  ) {}

  private dir(): string {
    this.root ??= mkdtempSync(join(tmpdir(), `nyl-run-${this.runId}-`));
    return this.root;
  }

  projectDir(): Promise<string> {
    this.source ??= this.materialize(join(this.dir(), 'source'));
    return this.source;
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
