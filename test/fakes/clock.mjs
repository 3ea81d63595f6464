// ManualClock: a Clock (src/util/clock.ts: now(), sleep(ms, signal?)) on virtual time, for tests.
//
// Semantics
// - Time is a number of milliseconds that moves only when a test moves it: `advance(ms)`,
//   `set(ms)`, `runUntilIdle()`, `drive(promise)`, or by itself with `{ autoAdvance: true }`.
// - `sleep(ms, signal)` never rejects. It resolves when virtual time reaches `now() + ms` (the
//   wake time), or as soon as `signal` aborts (then the sleeper is forgotten and its abort
//   listener removed; an already-aborted signal resolves at once without becoming a sleeper).
//   `sleep(0)` (or a negative or non-numeric ms) resolves on the next macrotask (setImmediate),
//   like a zero timeout, without becoming a sleeper.
// - `advance(ms)` moves time to `now() + ms`, waking every sleeper whose wake time is within
//   it, earliest first (equal wake times in the order they went to sleep). Before each wake,
//   `now()` is set to that sleeper's wake time; after each wake the event loop is turned once
//   (setImmediate), so every microtask the woken code queued has run: code woken at t=1000 that
//   sleeps again for 100 is woken by the same `advance` when 1100 is within it. The returned
//   promise resolves when time has reached the target (now() === target) and the last woken
//   code has run up to its next await. advance/set/runUntilIdle/drive calls are serialized.
// - `set(ms)` moves time to an absolute instant: forward like `advance`; backward it only
//   changes `now()` (sleepers keep their absolute wake times and wake when time gets there).
// - `sleepers()` is how many sleeps are pending; `nextWake()` the earliest wake time (or
//   undefined).
// - `runUntilIdle({ maxSteps })` repeatedly lets pending work run (the event loop turns until
//   nothing new happens on the clock for `idleTurns` turns), then jumps to the next wake time,
//   until no sleeper is left. It throws after `maxSteps` jumps (a poller that never ends).
// - `drive(promise, { maxSteps, idleTurns, realTimeoutMs })` settles `promise` the same way:
//   while it is pending, let the event loop run; when the clock has been quiet for `idleTurns`
//   turns and sleepers wait, jump to the next wake time. It resolves or rejects as the promise
//   does; it throws when `maxSteps` jumps were not enough, or when nobody sleeps and the
//   promise stays pending for `realTimeoutMs` of real time (it waits on something else).
// - `{ autoAdvance: true }` does the same in the background: whenever there are sleepers and
//   the clock has been quiet for `idleTurns` event-loop turns, time jumps to the next wake time.
//   Pragmatic, not exact: "quiet" means no sleep started or ended on this clock, so code that
//   waits on real I/O slower than a few event-loop turns may see time jump meanwhile. That is
//   what a fake process runner wants (processes cost no real time); keep it off for tests that
//   interleave virtual time with real I/O and move time by hand instead.
//
// import { ManualClock } from '../fakes/clock.mjs';
// const clock = new ManualClock(Date.parse('2024-01-01T00:00:00Z'));
// const p = clock.sleep(1000); await clock.advance(1000); await p;

const turn = () => new Promise((resolve) => setImmediate(resolve));

export class ManualClock {
  #now;
  #seq = 0;
  /** @type {{ wake: number, seq: number, done: () => void }[]} */
  #sleepers = [];
  /** Bumped whenever a sleep starts or ends: what "quiet" is measured by. */
  #activity = 0;
  #chain = Promise.resolve();
  #auto;
  #autoRunning = false;
  #idleTurns;

  /**
   * @param {number} [startMs] the initial now() (default 0)
   * @param {{ autoAdvance?: boolean, idleTurns?: number }} [options]
   */
  constructor(startMs = 0, options = {}) {
    this.#now = startMs;
    this.#auto = options.autoAdvance === true;
    this.#idleTurns = options.idleTurns ?? 3;
  }

  now() {
    return this.#now;
  }

  /** Whether time jumps by itself (see the header); can be switched at any time. */
  get autoAdvance() {
    return this.#auto;
  }

  set autoAdvance(on) {
    this.#auto = on === true;
    if (this.#auto) this.#kickAuto();
  }

  sleep(ms, signal) {
    if (signal?.aborted) return Promise.resolve();
    const delay = Number(ms);
    if (!(delay > 0)) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      const sleeper = { wake: this.#now + delay, seq: this.#seq++, done };
      const self = this;
      function done() {
        const i = self.#sleepers.indexOf(sleeper);
        if (i < 0) return;
        self.#sleepers.splice(i, 1);
        signal?.removeEventListener('abort', done);
        self.#activity++;
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
      this.#sleepers.push(sleeper);
      this.#activity++;
      if (this.#auto) this.#kickAuto();
    });
  }

  sleepers() {
    return this.#sleepers.length;
  }

  nextWake() {
    return this.#earliest()?.wake;
  }

  /** Moves time forward by ms (>= 0), waking sleepers in wake-time order. */
  advance(ms) {
    if (!(ms >= 0)) throw new RangeError(`ManualClock.advance: ms must be >= 0, got ${ms}`);
    return this.#serial(() => this.#runTo(this.#now + ms));
  }

  /** Moves time to an absolute instant; backward moves wake nobody. */
  set(ms) {
    return this.#serial(async () => {
      if (ms >= this.#now) await this.#runTo(ms);
      else this.#now = ms;
    });
  }

  /** Jumps from wake time to wake time until nobody sleeps; resolves with now(). */
  runUntilIdle({ maxSteps = 10_000, idleTurns = this.#idleTurns } = {}) {
    return this.#serial(async () => {
      for (let steps = 0; ; steps++) {
        await this.#quiet(idleTurns);
        const next = this.#earliest();
        if (!next) return this.#now;
        if (steps >= maxSteps) throw new Error(`ManualClock.runUntilIdle: still ${this.#sleepers.length} sleeper(s) after ${maxSteps} steps (t=${this.#now})`);
        await this.#wakeNext();
      }
    });
  }

  /** Settles `promise`, jumping to the next wake time whenever the clock is quiet (see header). */
  async drive(promise, { maxSteps = 10_000, idleTurns = this.#idleTurns, realTimeoutMs = 10_000 } = {}) {
    let settled = false;
    const watched = Promise.resolve(promise).finally(() => {
      settled = true;
    });
    watched.catch(() => {});
    let steps = 0;
    let idleSince;
    while (!settled) {
      await this.#quiet(idleTurns, () => settled);
      if (settled) break;
      const next = this.#earliest();
      if (next) {
        idleSince = undefined;
        if (++steps > maxSteps) throw new Error(`ManualClock.drive: the promise is still pending after ${maxSteps} time jumps (t=${this.#now})`);
        await this.#serial(() => this.#wakeNext());
      } else {
        idleSince ??= Date.now();
        if (Date.now() - idleSince > realTimeoutMs)
          throw new Error(`ManualClock.drive: the promise is still pending after ${realTimeoutMs} ms of real time with nobody sleeping on the clock`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
    return watched;
  }

  /**
   * A jump of the idle clock: to the earliest sleeper still waiting, waking it and any due then.
   * Time moves only together with a wake-up, so a sleep cancelled just before the jump (a timer
   * its owner stopped) does not move time on its own.
   */
  async #wakeNext() {
    await turn();
    const first = this.#earliest();
    if (!first) return;
    const target = Math.max(first.wake, this.#now);
    for (let next = first; next && next.wake <= target; next = this.#earliest()) {
      if (next.wake > this.#now) this.#now = next.wake;
      next.done();
      await turn();
    }
  }

  #earliest() {
    let best;
    for (const s of this.#sleepers) if (!best || s.wake < best.wake || (s.wake === best.wake && s.seq < best.seq)) best = s;
    return best;
  }

  #serial(fn) {
    const run = this.#chain.then(fn);
    this.#chain = run.catch(() => {});
    return run;
  }

  async #runTo(target) {
    await turn();
    for (;;) {
      const next = this.#earliest();
      if (!next || next.wake > target) break;
      if (next.wake > this.#now) this.#now = next.wake;
      next.done();
      await turn();
    }
    if (target > this.#now) this.#now = target;
  }

  /** Turns the event loop until nothing happened on the clock for `turns` turns in a row. */
  async #quiet(turns, stop = () => false) {
    let calm = 0;
    while (calm < turns && !stop()) {
      const before = this.#activity;
      await turn();
      calm = before === this.#activity ? calm + 1 : 0;
    }
  }

  #kickAuto() {
    if (this.#autoRunning) return;
    this.#autoRunning = true;
    (async () => {
      try {
        while (this.#auto && this.#sleepers.length > 0) {
          await this.#quiet(this.#idleTurns);
          const next = this.#earliest();
          if (!this.#auto || !next) break;
          await this.#serial(() => this.#wakeNext());
        }
      } finally {
        this.#autoRunning = false;
      }
      if (this.#auto && this.#sleepers.length > 0) this.#kickAuto();
    })();
  }
}
