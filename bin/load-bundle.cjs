'use strict';
/**
 * Loads the CLI bundle (dist/nyl.cjs, scripts/bundle.mjs) the way `require` would, but compiled
 * with V8's code cache for it (dist/nyl.cjs.cache, which the build writes): Node 20 keeps no
 * compiled code between processes, and compiling the bundle was a fifth of a small command's CPU.
 * A cache V8 rejects (another Node or V8 version, other flags, a rebuilt bundle) only costs the
 * compile it would have saved: V8 checks the source and its own version before using it.
 */
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

const BUNDLE = path.join(__dirname, '..', 'dist', 'nyl.cjs');
const CACHE = `${BUNDLE}.cache`;

function readCache() {
  try {
    return fs.readFileSync(CACHE);
  } catch {
    return undefined;
  }
}

/** The bundle's exports, and writeCache() to store the code compiled so far (the build calls it). */
function loadBundle() {
  const source = fs.readFileSync(BUNDLE, 'utf8');
  const cachedData = readCache();
  const script = new vm.Script(Module.wrap(source), { filename: BUNDLE, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {}, filename: BUNDLE };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(BUNDLE), module, BUNDLE, path.dirname(BUNDLE));
  return {
    exports: module.exports,
    writeCache: () => fs.writeFileSync(CACHE, script.createCachedData()),
  };
}

module.exports = { loadBundle };
