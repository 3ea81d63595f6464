/**
 * Local ref transactions through one long-lived `git update-ref --stdin` per repository, instead
 * of one process per transaction: a run moves its coordination refs once per checkpoint push,
 * and each process start costs Nyl's process a few milliseconds of fork time.
 *
 * Each transaction is `start`, its updates with their expectations, `prepare`, `commit`; git
 * answers `start: ok`, `prepare: ok`, `commit: ok`. A prepare that fails (a stale expectation, a
 * ref locked by another writer) makes git die without touching any ref, exactly like the
 * one-shot transaction before: the write is rejected, and the next one starts a new process. A
 * writer that ends any other way (killed, an object it cannot find) fails the transaction with
 * an error instead of leaving it waiting.
 */
import type { Git } from './git';
import { type RefUpdate, type RefWriteResult, classifyLocalFailure, transactionLines } from './refs';

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** The answers one transaction waits for, in order. */
const ANSWERS = ['start: ok', 'prepare: ok', 'commit: ok'];

export class RefTransactionSession {
  private child: ReturnType<Git['start']> | undefined;
  private out = '';
  private err = '';
  private answered = 0;
  private waiter: Waiter | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly git: Git,
    private readonly dir: string,
  ) {}

  /** Applies updates in one transaction; a mismatch of any expectation rejects all. One at a time. */
  apply(updates: RefUpdate[]): Promise<RefWriteResult> {
    if (updates.length === 0) return Promise.resolve({ ok: true });
    const next = this.chain.then(() => this.applyNow(updates));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private ensure(): NonNullable<RefTransactionSession['child']> {
    if (this.child) return this.child;
    const child = this.git.start(this.dir, ['update-ref', '--stdin']);
    this.out = '';
    this.err = '';
    child.stdout!.on('data', (chunk: Buffer) => this.onOutput(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.err += chunk.toString()));
    // A write to a writer that died is reported by 'close', with its exit and its stderr.
    child.stdin!.on('error', () => {});
    child.on('close', (code, signal) => this.onClose(child, code, signal));
    child.on('error', (error) => this.onClose(child, null, null, error));
    this.child = child;
    return child;
  }

  private onOutput(text: string): void {
    this.out += text;
    let nl = this.out.indexOf('\n');
    while (nl >= 0 && this.waiter) {
      const line = this.out.slice(0, nl);
      this.out = this.out.slice(nl + 1);
      if (line !== ANSWERS[this.answered]) {
        this.fail(new Error(`git update-ref --stdin answered ${JSON.stringify(line)} in ${this.dir}`));
        return;
      }
      if (++this.answered === ANSWERS.length) {
        const w = this.waiter;
        this.waiter = undefined;
        w.resolve();
      }
      nl = this.out.indexOf('\n');
    }
  }

  private onClose(child: NonNullable<RefTransactionSession['child']>, code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    if (this.child !== child) return;
    this.child = undefined;
    const how = error ? error.message : signal ? `killed by ${signal}` : `exit ${String(code)}`;
    const failure = new RefWriterEnded(`git update-ref --stdin ended (${how}) in ${this.dir}: ${this.err.trim()}`, code, this.err);
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(failure);
  }

  /** Ends the writer after an answer it did not expect: the transaction's outcome is unknown. */
  private fail(error: Error): void {
    const w = this.waiter;
    this.waiter = undefined;
    const child = this.child;
    this.child = undefined;
    child?.kill('SIGKILL');
    w?.reject(error);
  }

  private async applyNow(updates: RefUpdate[]): Promise<RefWriteResult> {
    const child = this.ensure();
    this.answered = 0;
    // What a failed prepare is classified by: this transaction's stderr, not an earlier one's warnings.
    this.err = '';
    const done = new Promise<void>((resolve, reject) => (this.waiter = { resolve, reject }));
    child.stdin!.write(transactionLines(updates).join('\n'));
    try {
      await done;
      return { ok: true };
    } catch (error) {
      // Died at prepare: nothing moved; the message tells a stale expectation from a fault.
      if (error instanceof RefWriterEnded && error.code !== null) {
        const rejected = classifyLocalFailure(error.stderr);
        if (rejected) return rejected;
      }
      throw error;
    }
  }

  /** Ends the writer: it has no transaction open between two `apply`. */
  close(): void {
    const child = this.child;
    this.child = undefined;
    child?.stdin!.end();
  }
}

/** The writer process ended before it confirmed the transaction. */
class RefWriterEnded extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'RefWriterEnded';
  }
}
