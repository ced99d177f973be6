// Preloaded with NODE_OPTIONS=--require (which refuses --trace-gc itself): turns on V8's --trace-gc, so a process's
// log says every collection, and --trace-incremental-marking, so it says what started each major one (the old
// generation's allocation limit, external memory, an idle task, the memory reducer). bench/ssh/cpu-split.ts counts
// the server's major collections and their starts by reason.
require('node:v8').setFlagsFromString('--trace-gc');
require('node:v8').setFlagsFromString('--trace-incremental-marking');
