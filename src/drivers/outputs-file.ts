/**
 * The outputs file of a Command or an OciImage container (NYL_OUTPUTS): a JSON object whose
 * members become the receipt's outputs. One reader, so both kinds follow the same rules. A
 * missing or empty file means no outputs. A file larger than the outputs of a unit may take
 * (OUTPUT_LIMITS) is refused unread; the engine checks the parsed outputs against the limits.
 * JSON.parse does not recurse, so a deeply nested file parses safely.
 *
 * The unit decides what lies at the path, so the reader trusts nothing about it: a symlink is
 * not followed (one to /dev/zero once made Nyl read until it ran out of memory), and only a
 * regular file is read, as the descriptor itself says (fstat: no window between a check and the
 * read for the unit to swap the file). The open does not block (a FIFO once held Nyl forever,
 * deaf to signals and timeouts, its lease held), and the read is asynchronous and stops after
 * the limit, whatever the file grows to meanwhile. Each of these is a reason, never a throw.
 *
 * The file goes as soon as it was read, whatever the result: its values must not outlive the
 * read in $TMPDIR (a killed run would leave them there in plain text).
 *
 * A member written as `{"value": V, "sensitive": true}` (exactly these two keys) is the sensitive
 * output V: the engine seals it for Git and masks it in what consumers print. With
 * `"sensitive": false` it is the plain output V.
 */
import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { type ApplyOutcome, type Failure, OUTPUT_LIMITS, type Outputs, type Uncertain, type UnitOutput, describeSize, failure } from './contract';

type OutputsRead = { ok: true; outputs: Outputs } | { ok: false; reason: string };

/** Read-only, not through a symlink, and without waiting for a writer (a FIFO). */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The outputs in the file at path (removed once read), or why there are none. */
export async function readOutputsFile(path: string): Promise<OutputsRead> {
  try {
    const text = await readText(path);
    return typeof text === 'string' ? parseOutputs(text) : text;
  } finally {
    await discard(path);
  }
}

/** Removes what the unit left at path. A directory stays, for the run's end to remove with the rest. */
async function discard(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch {
    // Gone already, or a directory: nothing here holds values the read took.
  }
}

function refused(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/** The file's text ('' when there is none), or why it is not read. */
async function readText(path: string): Promise<string | { ok: false; reason: string }> {
  let file: FileHandle;
  try {
    file = await open(path, OPEN_FLAGS);
  } catch (error) {
    const code = codeOf(error);
    if (code === 'ENOENT') return '';
    // O_NOFOLLOW on a symlink: ELOOP on Linux and macOS, EMLINK on FreeBSD.
    if (code === 'ELOOP' || code === 'EMLINK')
      return refused('NYL_OUTPUTS is a symbolic link, which Nyl does not follow; it was not read: write the outputs into the file itself');
    return refused(`NYL_OUTPUTS cannot be opened: ${code} (it must be a regular file)`);
  }
  try {
    return await readRegular(file);
  } catch (error) {
    return refused(`NYL_OUTPUTS cannot be read: ${codeOf(error)}`);
  } finally {
    await file.close();
  }
}

/** What a file that is not a regular one is, for a reason. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  return 'no regular file';
}

const LIMIT = describeSize(OUTPUT_LIMITS.bytes);

/** The text of an open regular file of at most the limit; anything else is refused. */
async function readRegular(file: FileHandle): Promise<string | { ok: false; reason: string }> {
  const stat = await file.stat();
  if (!stat.isFile()) return refused(`NYL_OUTPUTS is ${kindOf(stat)}, not a regular file; it was not read`);
  if (stat.size > OUTPUT_LIMITS.bytes)
    return refused(`NYL_OUTPUTS is ${describeSize(stat.size)}, more than the ${LIMIT} the outputs of a unit may take; it was not read`);
  // One byte more than the limit tells a file that grew past it since the fstat (a process the unit left behind).
  const bytes = await readAtMost(file, OUTPUT_LIMITS.bytes + 1);
  if (bytes.length > OUTPUT_LIMITS.bytes)
    return refused(`NYL_OUTPUTS grew past the ${LIMIT} the outputs of a unit may take while it was read; it was not used`);
  return bytes.toString('utf8');
}

/** Up to `max` bytes from the start of the file, in chunks: a small file costs a small buffer. */
async function readAtMost(file: FileHandle, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  while (length < max) {
    const chunk = Buffer.allocUnsafe(Math.min(max - length, 64 * 1024));
    const { bytesRead } = await file.read(chunk, 0, chunk.length, length);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    length += bytesRead;
  }
  return Buffer.concat(chunks, length);
}

/** The outputs a file's text holds. */
function parseOutputs(text: string): OutputsRead {
  if (text.trim() === '') return { ok: true, outputs: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Only where: JSON.parse quotes the text around the error, and it may hold a secret.
    const at = /at position (\d+)/.exec((error as Error).message)?.[1];
    return refused(`NYL_OUTPUTS holds invalid JSON${at ? ` at position ${at}` : ''} (its content is not shown)`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return refused('NYL_OUTPUTS must hold a JSON object');
  // JSON.parse makes "__proto__" an own member; assigned to the outputs, it would vanish silently.
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return refused('NYL_OUTPUTS names an output __proto__, which cannot be recorded: rename it');
  const outputs: Outputs = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) outputs[k] = asOutput(v);
  return { ok: true, outputs };
}

/** A member of the file as an output: the `{value, sensitive}` form, or any other value as plain. */
function asOutput(v: unknown): UnitOutput {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const keys = Object.keys(v).sort();
    const marked = v as { value?: unknown; sensitive?: unknown };
    if (keys.length === 2 && keys[0] === 'sensitive' && keys[1] === 'value' && typeof marked.sensitive === 'boolean')
      return { value: marked.value, sensitive: marked.sensitive };
  }
  return { value: v, sensitive: false };
}

/**
 * A failed or stopped execution, with the outputs its tool wrote before it ended: never recorded,
 * they tell the engine which new sensitive values to mask in what the unit keeps (a producer
 * that wrote a rotated password, printed it, and failed). The file is read, and so removed, either way.
 */
async function withUnrecordedOutputs<T extends Failure | Uncertain>(bad: T, path: string): Promise<T> {
  const read = await readOutputsFile(path);
  if (!read.ok || !Object.values(read.outputs).some((o) => o.sensitive)) return bad;
  return { ...bad, unrecorded: read.outputs };
}

/**
 * The apply outcome of a tool that was given an outputs file (a Command's, a container's): its
 * failure, with what it wrote unrecorded; else a receipt of the outputs the file holds.
 */
export async function applyOutcome(bad: Failure | Uncertain | undefined, path: string): Promise<ApplyOutcome> {
  if (bad) return withUnrecordedOutputs(bad, path);
  const outputs = await readOutputsFile(path);
  return outputs.ok ? { result: 'receipt', outputs: outputs.outputs } : failure(outputs.reason, true);
}
