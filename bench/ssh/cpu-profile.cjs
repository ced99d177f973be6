// Preloaded with NODE_OPTIONS=--require (which refuses --cpu-prof itself): profiles the whole process with V8's
// sampling profiler and writes GATEHOUSE_CPU_PROFILE (a .cpuprofile for Chrome DevTools or profile-summary.ts)
// when the process exits.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');

const target = process.env.GATEHOUSE_CPU_PROFILE;
if (target) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  let written = false;
  process.on('exit', () => {
    if (written) return;
    written = true;
    // An in-thread inspector session answers synchronously, so the profile is written before the exit completes.
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(target, JSON.stringify(result.profile));
    });
  });
}
