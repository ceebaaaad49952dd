// `--require`d into a broker for diagnostics only (never into the timed runs): on SIGUSR2 it
// writes where the process's memory is to $MEMPROBE_OUT (default memprobe-<pid>.json in the
// working directory): process.memoryUsage() before and after an optional compacting collection
// ($MEMPROBE_GC=1; needs --expose-gc), V8's heap spaces and code statistics, the modules
// require()d so far, the active handles and /proc/<pid>/smaps_rollup; with $MEMPROBE_SNAP=<file>
// also a heap snapshot (v8.writeHeapSnapshot). How the figures of "Memory and reload, stop 39"
// in docs/performance.md were read:
//   node --max-semi-space-size=1 --expose-gc --require bench/memory-probe.cjs dist/broker.js serve …
//   kill -USR2 <pid>
'use strict';
const fs = require('node:fs');
const v8 = require('node:v8');
const Module = require('node:module');

const loaded = new Set();
const load = Module._load;
Module._load = function (request) {
  loaded.add(request);
  return load.apply(this, arguments);
};

process.on('SIGUSR2', () => {
  const before = process.memoryUsage();
  if (process.env.MEMPROBE_GC && globalThis.gc)
    globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  // Pages freed by the collection leave the RSS a moment later.
  setTimeout(() => dump(before), 300);
});

function dump(before) {
  const out = process.env.MEMPROBE_OUT || `memprobe-${process.pid}.json`;
  const record = {
    before,
    after: process.memoryUsage(),
    heap: v8.getHeapStatistics(),
    spaces: v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size, s.space_size]),
    code: v8.getHeapCodeStatistics(),
    loaded: [...loaded],
    handles: process._getActiveHandles().map((h) => h.constructor?.name),
    smapsRollup: readOr(`/proc/${process.pid}/smaps_rollup`),
  };
  if (process.env.MEMPROBE_SNAP) record.snapshot = v8.writeHeapSnapshot(process.env.MEMPROBE_SNAP);
  fs.writeFileSync(out, JSON.stringify(record, null, 1));
}

function readOr(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
