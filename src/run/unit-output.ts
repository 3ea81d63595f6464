/**
 * Where a unit's tool output goes: to stderr, indented and prefixed with the
 * unit's address on every line, unless --quiet-unit-output; and, with --unit-log-dir DIR,
 * appended to DIR/ENV/UNIT.log with the run's start and end lines, one file per unit.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface UnitOutputOptions {
  quiet: boolean;
  logDir?: string;
}

export class UnitOutput {
  private readonly created = new Set<string>();

  constructor(
    private readonly env: string,
    private readonly options: UnitOutputOptions,
    private readonly stderr: (line: string) => void,
  ) {}

  private file(unit: string): string | undefined {
    if (!this.options.logDir) return undefined;
    const dir = join(this.options.logDir, this.env);
    if (!this.created.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.created.add(dir);
    }
    return join(dir, `${unit}.log`);
  }

  /** A start or end line of the unit: always on stderr, and in its log. */
  event(unit: string, text: string): void {
    const line = `[${this.env}/${unit}] ${text}`;
    this.stderr(line);
    const file = this.file(unit);
    if (file) appendFileSync(file, `${line}\n`);
  }

  /** One line of the tool's own output. */
  tool(unit: string, text: string): void {
    if (!this.options.quiet) this.stderr(`  [${this.env}/${unit}] ${text}`);
    const file = this.file(unit);
    if (file) appendFileSync(file, `${text}\n`);
  }
}
