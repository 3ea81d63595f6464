// What a value the run keeps per unit costs in the heap, measured in a process of its own with
// --expose-gc. The run holds one uid per unit for its whole life (5,000 units: 5,000 uids), and a
// string built from parts stays a tree of those parts (a V8 cons string) until something flattens
// it: a 36-character uid built from five slices took about 350 bytes instead of about 60.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

/** Heap bytes per value that `make(i)` returns, 50,000 of them kept alive. */
function bytesPerValue(module, make) {
  const code = `
    const m = require(${JSON.stringify(path.join(DIST, module))});
    const make = ${make};
    gc(); gc();
    const before = process.memoryUsage().heapUsed;
    const kept = [];
    for (let i = 0; i < 50000; i++) kept.push(make(m, i));
    gc(); gc();
    const after = process.memoryUsage().heapUsed;
    process.stdout.write(String((after - before) / kept.length));`;
  return Number(execFileSync(process.execPath, ['--expose-gc', '-e', code], { encoding: 'utf8' }));
}

test('a uid costs one flat string (under 120 bytes with its array slot), not a tree of its parts', () => {
  const bytes = bytesPerValue('util/uuid.js', '(m, i) => m.uuidv7(1_700_000_000_000 + i)');
  assert.ok(bytes < 120, `${bytes.toFixed(0)} bytes per uid`);
});
