/** Splits a byte stream into lines for prefixing; keeps the unterminated tail until flush. */
export class LineSplitter {
  private tail = '';
  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer): void {
    const text = this.tail + chunk.toString('utf8');
    const lines = text.split('\n');
    this.tail = lines.pop() ?? '';
    for (const l of lines) this.emit(l.replace(/\r$/, ''));
  }

  flush(): void {
    if (this.tail) this.emit(this.tail);
    this.tail = '';
  }
}
