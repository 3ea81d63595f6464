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
 * unit, on stderr and in its log, as text and as bytes; the key ring's own texts in every unit's.
 *
 * Writing output never throws: a log that cannot be written (disk full, a directory in the way)
 * is reported once on stderr and then left alone, so it never costs a unit its checkpoint.
 *
 * Whoever can write in the log directory could plant a file at a log path, so a log is only
 * appended to a regular file reached without a symlink: one at the path (or at DIR/ENV, which
 * Nyl creates) once made Nyl append to a file elsewhere. The open does not wait for a reader (a
 * FIFO at the path would hold Nyl), and what is not a regular file is refused as a write error
 * is. Logs hold what units print: the directories Nyl creates are 0700, the files 0600. In a
 * shared DIR another user could also plant DIR/ENV or a log file of their own, open to all (0666):
 * Nyl would append what units print to a file they read. So an existing log file must be this
 * user's with no access for group or others, and DIR/ENV this user's and writable by no one else
 * (where Node gives no uid, only the modes are checked).
 *
 * It also keeps each unit's last TAIL_LINES lines, masked, without terminal control characters
 * and cut to TAIL_LINE_CHARS, for the condition of a unit that fails (../state/documents.ts): the
 * tool's own words about why, where `exited with code 1` is all the driver says. These go to
 * Git, so a line is masked before anything else is done to it, and masked again once its
 * control characters are gone (they could have split a value).
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolLine } from '../exec/lines';

/** How many of its last lines a unit's condition keeps, and how long each may be (UTF-16 units). */
const TAIL_LINES = 20;
const TAIL_LINE_CHARS = 300;

/** Terminal escape sequences (colours, cursor moves) and the other control characters but tab. */
const CONTROL = /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]/g;

const NEWLINE = Buffer.from('\n');
/** Appends, creates 0600, never through a symlink, never waits for a reader (see the header). */
const LOG_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
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

function notFollowed(path: string): Error {
  return new Error(`${path} is a symbolic link, which Nyl does not follow`);
}

/** The owner and mode of a file, as stat gives them. */
interface Ownership {
  uid: number;
  mode: number;
}

/** This user's uid, to compare owners with; undefined where Node gives none (no process.getuid). */
const ownUid = (): number | undefined => process.getuid?.();

const octal = (mode: number): string => (mode & 0o777).toString(8).padStart(4, '0');

function otherOwner(stat: Ownership, path: string, uid: number | undefined): string | undefined {
  return uid !== undefined && stat.uid !== uid ? `${path} is owned by uid ${stat.uid}, not by this user (uid ${uid})` : undefined;
}

/** Why a log file is not this user's alone: another owner, or any access for group or others. */
export function foreignLogFile(stat: Ownership, path: string, uid: number | undefined): string | undefined {
  const owner = otherOwner(stat, path, uid);
  if (owner) return owner;
  return (stat.mode & 0o077) === 0 ? undefined : `${path} has mode ${octal(stat.mode)}: group or others may access it (a log of ours is 0600)`;
}

/** Why DIR/ENV is not this user's: another owner, or group or others may write in it (and so plant files). */
export function foreignLogDir(stat: Ownership, path: string, uid: number | undefined): string | undefined {
  const owner = otherOwner(stat, path, uid);
  if (owner) return owner;
  return (stat.mode & 0o022) === 0 ? undefined : `${path} has mode ${octal(stat.mode)}: group or others may write in it`;
}

/** DIR/ENV, made 0700 (DIR too when it is missing); refused when it is a symlink or not this user's. */
function makeLogDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink()) throw notFollowed(dir);
  const foreign = foreignLogDir(stat, dir, ownUid());
  if (foreign) throw new Error(foreign);
}

/** Why no log is appended to this descriptor: it is not a regular file, or not this user's alone. */
function refusedLog(fd: number, path: string): Error | undefined {
  const stat = fstatSync(fd);
  if (!stat.isFile()) return new Error(`${path} is not a regular file`);
  const foreign = foreignLogFile(stat, path, ownUid());
  return foreign ? new Error(foreign) : undefined;
}

/** Appends bytes to the log file at path (see the header for what it refuses). */
function appendTo(path: string, bytes: Buffer): void {
  let fd: number;
  try {
    fd = openSync(path, LOG_FLAGS, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // O_NOFOLLOW on a symlink: ELOOP (EMLINK on FreeBSD); a FIFO without a reader: ENXIO.
    if (code === 'ELOOP' || code === 'EMLINK') throw notFollowed(path);
    if (code === 'ENXIO') throw new Error(`${path} is not a regular file`);
    throw error;
  }
  try {
    const refused = refusedLog(fd, path);
    if (refused) throw refused;
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
  } finally {
    closeSync(fd);
  }
}

/** A line cut to TAIL_LINE_CHARS, marked when cut; never half a surrogate pair. */
function cut(line: string): string {
  if (line.length <= TAIL_LINE_CHARS) return line;
  const end = /[\ud800-\udbff]/.test(line[TAIL_LINE_CHARS - 1]!) ? TAIL_LINE_CHARS - 1 : TAIL_LINE_CHARS;
  return `${line.slice(0, end)}...`;
}

export interface UnitOutputOptions {
  quiet: boolean;
  logDir?: string;
  /** Texts masked in every unit's lines (the key ring's own texts). */
  alwaysMasked?: readonly string[];
}

export class UnitOutput {
  private dirMade = false;
  private logBroken = false;
  /** Per unit, the texts to mask. */
  private readonly masks = new Map<string, string[]>();
  /** Per unit, its last lines since tailFrom(), masked and cut (see the header). */
  private readonly tails = new Map<string, string[]>();

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
        makeLogDir(dir);
        this.dirMade = true;
      }
      const ended = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE[0];
      appendTo(join(dir, `${unit}.log`), ended ? bytes : Buffer.concat([bytes, NEWLINE]));
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

  /**
   * Masks these texts in every later line of the unit. A text of several lines never stands
   * whole in one line of output, so each of its lines (of 3 characters or more) is masked too.
   */
  mask(unit: string, texts: readonly string[]): void {
    const all = new Set([...texts, ...(this.options.alwaysMasked ?? [])]);
    for (const t of texts) if (t.includes('\n')) for (const l of t.split(/\r?\n/)) if (l.length >= 3) all.add(l);
    if (all.size > 0)
      this.masks.set(
        unit,
        [...all].sort((a, b) => b.length - a.length),
      );
  }

  /**
   * Masks these texts from now on and in the lines kept so far: values learned only after the
   * tool printed them (the outputs a failed execution wrote).
   */
  maskKept(unit: string, texts: readonly string[]): void {
    if (texts.length === 0) return;
    this.mask(unit, [...(this.masks.get(unit) ?? []), ...texts]);
    const tail = this.tails.get(unit);
    if (tail)
      this.tails.set(
        unit,
        tail.map((line) => this.maskedText(unit, line)),
      );
  }

  /** Starts keeping the unit's last lines afresh: its execution starts. */
  tailFrom(unit: string): void {
    this.tails.set(unit, []);
  }

  /** The unit's last lines since tailFrom(), masked (empty when it printed nothing); keeping them ends. */
  takeTail(unit: string): string[] {
    const tail = this.tails.get(unit) ?? [];
    this.tails.delete(unit);
    return tail;
  }

  /** Keeps a line of the unit (`masked`: its text, masked already), as its condition may show it: masked, readable, short. */
  private keep(unit: string, masked: string): void {
    const tail = this.tails.get(unit);
    if (!tail) return;
    // What a terminal shows of a line redrawn with \r (a progress bar) is its last drawing.
    const shown = masked.slice(masked.lastIndexOf('\r', masked.length - 2) + 1);
    const plain = shown.replace(CONTROL, '');
    tail.push(cut((plain === shown ? plain : this.maskedText(unit, plain)).trimEnd()));
    if (tail.length > TAIL_LINES) tail.shift();
  }

  /** The unit's masks: what it was given (mask()), else the texts masked in every unit's lines. */
  private masksOf(unit: string): readonly string[] | undefined {
    return this.masks.get(unit) ?? this.options.alwaysMasked;
  }

  private maskedText(unit: string, text: string): string {
    const masks = this.masksOf(unit);
    if (!masks) return text;
    let out = text;
    for (const m of masks) if (out.includes(m)) out = out.split(m).join(MASK);
    return out;
  }

  /** The bytes with every masked text replaced: a tool's bytes need not be UTF-8, the masks are. */
  private maskedBytes(unit: string, bytes: Buffer): Buffer {
    const masks = this.masksOf(unit);
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
    const masked = this.maskedText(unit, line.text);
    if (!this.options.quiet) this.safely(`  [${this.env}/${unit}] ${masked}`);
    this.append(unit, this.maskedBytes(unit, line.bytes));
    this.keep(unit, masked);
  }
}
