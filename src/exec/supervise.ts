/**
 * Supervises a tool process: a timeout, cancellation that forwards the signal to the tool's
 * process group and kills it after a grace period, and line-wise output forwarding.
 */
import type { ChildProcess } from 'node:child_process';

export interface SuperviseOptions {
  timeoutMs?: number;
  cancel?: AbortSignal;
  /** How long a tool may run after a forwarded signal before SIGKILL. */
  graceMs: number;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

export interface Supervised {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  spawnError?: NodeJS.ErrnoException;
  durationMs: number;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

export function supervise(child: ChildProcess, options: SuperviseOptions): Promise<Supervised> {
  const began = Date.now();
  return new Promise((resolve) => {
    let timedOut = false;
    let cancelled = false;
    let spawnError: NodeJS.ErrnoException | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const escalate = () => {
      killTimer ??= setTimeout(() => killGroup(child, 'SIGKILL'), options.graceMs);
    };
    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            killGroup(child, 'SIGTERM');
            escalate();
          }, options.timeoutMs)
        : undefined;
    const onCancel = () => {
      cancelled = true;
      const reason = options.cancel?.reason;
      killGroup(child, reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
      escalate();
    };
    if (options.cancel?.aborted) onCancel();
    else options.cancel?.addEventListener('abort', onCancel, { once: true });
    child.stdout?.on('data', (b: Buffer) => options.onStdout?.(b));
    child.stderr?.on('data', (b: Buffer) => options.onStderr?.(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError = e;
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.cancel?.removeEventListener('abort', onCancel);
      const out: Supervised = { code, signal, timedOut, cancelled, durationMs: Date.now() - began };
      if (spawnError) out.spawnError = spawnError;
      resolve(out);
    });
  });
}

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
