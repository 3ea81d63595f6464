/**
 * Splits a tool's output stream into lines, each both as the bytes the tool wrote (for its log)
 * and as text (for a terminal).
 *
 * The lines are cut at newline bytes, so the bytes stay exactly as written: an invalid UTF-8 byte
 * or a `\r` reaches the log unchanged. The text comes from one streaming decoder per stream, so a
 * character whose bytes arrive in two chunks is whole; an invalid byte reads as U+FFFD.
 *
 * Memory stays bounded: a line still without its newline once it holds MAX_LINE_BYTES (a progress
 * bar redrawn with `\r`, a huge minified document) is passed on as a piece rather than held.
 */
import { StringDecoder } from 'node:string_decoder';

/** One line of a tool's output, or a piece of one (see MAX_LINE_BYTES). */
export interface ToolLine {
  /**
   * What the tool wrote, its newline included; without one only for the end of the output and for
   * the pieces of an over-long line.
   */
  bytes: Buffer;
  /** The same as text, without its line ending (`\n` or `\r\n`). */
  text: string;
}

/** How much of one line is held before it is passed on in pieces. */
const MAX_LINE_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

export class LineSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly emit: (line: ToolLine) => void,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      this.hold(chunk.subarray(from, nl + 1));
      this.release(false);
      from = nl + 1;
    }
    if (from < chunk.length) this.hold(chunk.subarray(from));
    if (this.heldBytes >= this.maxLineBytes) this.release(false);
  }

  /** At the end of the output: its last line, if it had no newline. */
  flush(): void {
    if (this.heldBytes > 0) this.release(true);
  }

  private hold(bytes: Buffer): void {
    this.held.push(bytes);
    this.heldBytes += bytes.length;
  }

  /** Emits what is held; the decoder keeps a character cut at the end of a piece for the next. */
  private release(end: boolean): void {
    const bytes = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    const text = this.decoder.write(bytes) + (end ? this.decoder.end() : '');
    this.emit({ bytes, text: withoutLineEnding(text) });
  }
}

function withoutLineEnding(text: string): string {
  if (!text.endsWith('\n')) return text;
  return text.slice(0, text.endsWith('\r\n') ? -2 : -1);
}
