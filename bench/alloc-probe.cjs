// `--require`d into a broker by bench/alloc-profile.mjs (never into timed runs): V8's sampling heap
// profiler, started on SIGUSR1 and written to /tmp/allocprof-<pid>.json on SIGUSR2, counting every
// sampled allocation, collected ones included (what a call allocates, not what survives it).
'use strict';
const inspector = require('node:inspector');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const session = new inspector.Session();
session.connect();
const file = (suffix) => path.join(os.tmpdir(), `allocprof-${process.pid}.${suffix}`);

process.on('SIGUSR1', () => {
  const sampling = {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  };
  session.post('HeapProfiler.enable', () =>
    session.post('HeapProfiler.startSampling', sampling, (err) =>
      fs.writeFileSync(file('started'), String(err ?? 'ok')),
    ),
  );
});
process.on('SIGUSR2', () => {
  session.post('HeapProfiler.stopSampling', (err, res) =>
    fs.writeFileSync(file('json'), JSON.stringify(err ? { error: String(err) } : res.profile)),
  );
});
