/**
 * The directory a module runs in: a scratch copy of the module at the source commit, so that the
 * files Terraform writes next to the module (`.terraform.lock.hcl`, a default local state) never
 * touch the run's copy of the source, which every unit of the run shares.
 *
 * The copy sits at the module's own path inside a mirror of the project: every other entry along
 * that path is a symlink to the run's copy, so `source = "../modules/net"` resolves as it does in
 * the repository. Terraform's data directory (TF_DATA_DIR), the variables file and the saved plan
 * live in the scratch directory too, outside the copy.
 */
import { chmodSync, cpSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';

export interface ModuleDir {
  /** The root of the mirror of the project the copy sits in. */
  mirrorRoot: string;
  /** Where the tool runs: the copy of the module. */
  cwd: string;
  /** TF_DATA_DIR. */
  dataDir: string;
  /** The variables file (`-var-file`), written only when there are variables. */
  varFile: string;
  /** The saved plan (`plan -out`). */
  planFile: string;
  /** The saved refresh-only plan of a drift check. */
  refreshPlanFile: string;
}

/** Mirrors `dir` of the project at `mirror`: every entry a symlink, except `keep` (made a directory). */
function mirrorLevel(projectDir: string, dir: string, mirror: string, keep: string): void {
  mkdirSync(mirror, { recursive: true });
  for (const entry of readdirSync(join(projectDir, dir))) {
    if (entry === keep) continue;
    symlinkSync(join(projectDir, dir, entry), join(mirror, entry));
  }
}

/** Copies the module at `module` (relative to the project) into a mirror of the project under `scratch`. */
export function moduleDir(projectDir: string, module: string, scratch: string): ModuleDir {
  const parts = module.split(/[\\/]+/).filter((p) => p !== '' && p !== '.');
  const mirrorRoot = join(scratch, 'source');
  let dir = '';
  for (const part of parts) {
    mirrorLevel(projectDir, dir, join(mirrorRoot, dir), part);
    dir = dir === '' ? part : `${dir}${sep}${part}`;
  }
  const cwd = join(mirrorRoot, dir);
  // The module itself is copied (symlinks inside it stay symlinks), so its own files can be written.
  cpSync(join(projectDir, dir), cwd, { recursive: true, verbatimSymlinks: true });
  const dataDir = join(scratch, 'data');
  mkdirSync(dataDir, { recursive: true });
  return {
    mirrorRoot,
    cwd,
    dataDir,
    varFile: join(scratch, 'vars.tfvars.json'),
    planFile: join(scratch, 'nyl.tfplan'),
    refreshPlanFile: join(scratch, 'refresh.tfplan'),
  };
}

/**
 * Writes the variables the tool reads from its variables file (never a sensitive one), readable
 * by its owner only; false, and no file, when there are none.
 */
export function writeVarFile(dir: ModuleDir, variables: Record<string, unknown>): boolean {
  if (Object.keys(variables).length === 0) {
    rmSync(dir.varFile, { force: true });
    return false;
  }
  writeFileSync(dir.varFile, `${JSON.stringify(variables, null, 2)}\n`, { mode: 0o600 });
  chmodSync(dir.varFile, 0o600);
  return true;
}
