// Preloaded with NODE_OPTIONS=--require: runs three full collections as the process starts, after making some
// garbage, so V8 works out its old generation's limit from a real heap before a benchmark measures anything, as it
// has in a process that has run for days. Used to check that a heap setting still holds after full collections
// (bench/RESULTS.md, "The agent's heap floor").
require('node:v8').setFlagsFromString('--expose-gc');
const gc = require('node:vm').runInNewContext('gc');
let garbage = [];
for (let i = 0; i < 200000; i++) garbage.push({ i });
gc();
garbage = null;
gc();
gc();
