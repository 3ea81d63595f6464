/**
 * Where a unit's tool output goes: to stderr, indented and prefixed with the
 * unit's address on every line, unless --quiet-unit-output; and, with --unit-log-dir DIR,
 * appended to DIR/ENV/UNIT.log with the run's start and end lines, one file per unit.
 *
 * The log keeps the tool's bytes as it wrote them (the terminal gets text): only a newline is
 * added where a line had none (the tool's last one, a piece of an over-long line), so that every
 * entry of the log, the start and end lines included, ends with one.
 *
 * Sensitive values a unit was given (./secrets.ts) are replaced by `***` in every line of that
 * unit, on stderr and in its log, as text and as bytes.
 *
 * Writing output never throws: a log that cannot be written (disk full, a directory in the way)
 * is reported once on stderr and then left alone, so it never costs a unit its checkpoint.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolLine } from '../exec/lines';

const NEWLINE = Buffer.from('\n');
const MASK = '***';
const MASK_BYTES = Buffer.from(MASK);

/** The bytes with every occurrence of `find` replaced. */
function replaceAll(bytes: Buffer, find: Buffer, by: Buffer): Buffer {
  let at = bytes.indexOf(find);
  if (at < 0 || find.length === 0) return bytes;
  const parts: Buffer[] = [];
  let from = 0;
  for (; at >= 0; at = bytes.indexOf(find, from)) {
    parts.push(bytes.subarray(from, at), by);
    from = at + find.length;
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

export interface UnitOutputOptions {
  quiet: boolean;
  logDir?: string;
}

export class UnitOutput {
  private dirMade = false;
  private logBroken = false;
  /** Per unit, the texts to mask. */
  private readonly masks = new Map<string, string[]>();

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

  /** Masks these texts in every later line of the unit. */
  mask(unit: string, texts: readonly string[]): void {
    if (texts.length > 0) this.masks.set(unit, [...texts].sort((a, b) => b.length - a.length));
  }

  private maskedText(unit: string, text: string): string {
    const masks = this.masks.get(unit);
    if (!masks) return text;
    let out = text;
    for (const m of masks) if (out.includes(m)) out = out.split(m).join(MASK);
    return out;
  }

  /** The bytes with every masked text replaced: a tool's bytes need not be UTF-8, the masks are. */
  private maskedBytes(unit: string, bytes: Buffer): Buffer {
    const masks = this.masks.get(unit);
    if (!masks) return bytes;
    let out = bytes;
    for (const m of masks) out = replaceAll(out, Buffer.from(m), MASK_BYTES);
    return out;
  }

  /** A start or end line of the unit: always on stderr, and in its log. */
  event(unit: string, text: string): void {
    const line = this.maskedText(unit, `[${this.env}/${unit}] ${text}`);
    this.safely(line);
    this.append(unit, Buffer.from(line));
  }

  /** One line of the tool's own output: its text on stderr, its bytes in the log. */
  tool(unit: string, line: ToolLine): void {
    if (!this.options.quiet) this.safely(`  [${this.env}/${unit}] ${this.maskedText(unit, line.text)}`);
    this.append(unit, this.maskedBytes(unit, line.bytes));
  }
}
