/**
 * Where a unit's tool output goes: to stderr, indented and prefixed with the
 * unit's address on every line, unless --quiet-unit-output; and, with --unit-log-dir DIR,
 * appended to DIR/ENV/UNIT.log with the run's start and end lines, one file per unit.
 *
 * The log keeps the tool's bytes as it wrote them (the terminal gets text): only a newline is
 * added where a line had none (the tool's last one, a piece of an over-long line), so that every
 * entry of the log, the start and end lines included, ends with one.
 *
 * Writing output never throws: a log that cannot be written (disk full, a directory in the way)
 * is reported once on stderr and then left alone, so it never costs a unit its checkpoint.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolLine } from '../exec/lines';

const NEWLINE = Buffer.from('\n');

export interface UnitOutputOptions {
  quiet: boolean;
  logDir?: string;
}

export class UnitOutput {
  private dirMade = false;
  private logBroken = false;

  constructor(
    private readonly env: string,
    private readonly options: UnitOutputOptions,
    private readonly stderr: (line: string) => void,
  ) {}

  /** Appends an entry to the unit's log, if there is one, ending it with a newline. */
  private append(unit: string, bytes: Buffer): void {
    if (!this.options.logDir || this.logBroken) return;
    const dir = join(this.options.logDir, this.env);
    try {
      if (!this.dirMade) {
        mkdirSync(dir, { recursive: true });
        this.dirMade = true;
      }
      const ended = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE[0];
      appendFileSync(join(dir, `${unit}.log`), ended ? bytes : Buffer.concat([bytes, NEWLINE]));
    } catch (error) {
      this.logBroken = true;
      this.safely(`nyl: warning: cannot write unit logs in ${dir}, no more are written: ${(error as Error).message}`);
    }
  }

  private safely(line: string): void {
    try {
      this.stderr(line);
    } catch {
      // stderr closed: nothing more to tell anyone.
    }
  }

  /** A start or end line of the unit: always on stderr, and in its log. */
  event(unit: string, text: string): void {
    const line = `[${this.env}/${unit}] ${text}`;
    this.safely(line);
    this.append(unit, Buffer.from(line));
  }

  /** One line of the tool's own output: its text on stderr, its bytes in the log. */
  tool(unit: string, line: ToolLine): void {
    if (!this.options.quiet) this.safely(`  [${this.env}/${unit}] ${line.text}`);
    this.append(unit, line.bytes);
  }
}
