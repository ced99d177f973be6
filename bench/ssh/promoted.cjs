// Preloaded with NODE_OPTIONS=--require: samples the allocations that outlive a scavenge, that is what the young
// generation promotes into the old one, whose growth starts the major collections of a bulk transfer. V8's sampling
// heap profiler is asked to drop samples of objects a scavenge freed and keep those a major collection freed, so the
// profile holds what survived the young generation, whether it died later or is still alive.
// The first SIGUSR2 starts sampling, the second writes the profile to <tmpdir>/gatehouse-promoted-<pid>.heapprofile
// and stops.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const session = new Session();
session.connect();
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.enable', () =>
      session.post('HeapProfiler.startSampling', {
        samplingInterval: 8192,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: false,
      }),
    );
    return;
  }
  sampling = false;
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (!err)
      writeFileSync(
        join(tmpdir(), `gatehouse-promoted-${process.pid}.heapprofile`),
        JSON.stringify(result.profile),
      );
  });
});
