// Preloaded with NODE_OPTIONS=--require (which refuses --trace-gc itself): turns on V8's --trace-gc, so a process's
// log says every collection and why. bench/ssh/cpu-split.ts counts the server's major ones.
require('node:v8').setFlagsFromString('--trace-gc');
