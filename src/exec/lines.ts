/**
 * Splits a byte stream into lines for prefixing; keeps the unterminated tail until flush. A
 * character whose UTF-8 bytes arrive in two chunks is decoded whole.
 */
import { StringDecoder } from 'node:string_decoder';

export class LineSplitter {
  private tail = '';
  private readonly decoder = new StringDecoder('utf8');
  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer): void {
    const text = this.tail + this.decoder.write(chunk);
    const lines = text.split('\n');
    this.tail = lines.pop() ?? '';
    for (const l of lines) this.emit(l.replace(/\r$/, ''));
  }

  flush(): void {
    const rest = this.tail + this.decoder.end();
    if (rest) this.emit(rest);
    this.tail = '';
  }
}
