/**
 * Nyl's stderr: its lines, and when stderr is a terminal the live status line of the units that
 * run long (src/run/progress.ts). The status line stays below the lines: before each line it is
 * cleared (`\r` and erase to the end of the line), after it drawn again. It is cut to the
 * terminal's width, because a line that wraps cannot be cleared with `\r`. A `dumb` terminal
 * (TERM=dumb) cannot erase and gets the lines of a log instead.
 */
import type { LiveStatus, Runtime } from '../util/runtime';

const CLEAR = '\r\x1b[K';

class TerminalStatus implements LiveStatus {
  private readonly parts = new Map<string, string>();
  /** The status line on the terminal now ('' when none). */
  private shown = '';

  constructor(private readonly stream: NodeJS.WriteStream) {}

  set(key: string, text: string | undefined): void {
    if (text) this.parts.set(key, text);
    else this.parts.delete(key);
    const next = this.render();
    if (next === this.shown) return;
    this.write(`${CLEAR}${next}`);
    this.shown = next;
  }

  log(line: string): void {
    this.write(`${this.shown ? CLEAR : ''}${line}\n${this.shown}`);
  }

  /** Leaves the terminal without the status line (the process ends). */
  clear(): void {
    if (this.shown) this.write(CLEAR);
    this.shown = '';
  }

  /** `running: migrate 1m02s, db 12s`; with several environments running, each named. */
  private render(): string {
    if (this.parts.size === 0) return '';
    const text = this.parts.size === 1 ? [...this.parts.values()][0]! : [...this.parts].map(([k, t]) => `${k}: ${t}`).join('; ');
    const width = Math.max(20, (this.stream.columns || 80) - 1);
    const line = `running: ${text}`;
    return line.length > width ? `${line.slice(0, width - 3)}...` : line;
  }

  private write(text: string): void {
    this.stream.write(text);
  }
}

/** The runtime's log (and, on a terminal, its live status line) on this stream. */
export function stderrPorts(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): Pick<Runtime, 'log' | 'liveStatus'> {
  if (!stream.isTTY || env.TERM === 'dumb') return { log: (line) => stream.write(`${line}\n`) };
  const terminal = new TerminalStatus(stream);
  process.once('exit', () => terminal.clear());
  return { log: (line) => terminal.log(line), liveStatus: terminal };
}
