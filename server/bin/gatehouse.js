#!/usr/bin/env node
// The `gatehouse` command as the workspace links it into node_modules/.bin, so that `npx gatehouse` in a checkout
// runs this checkout's CLI. Without a local bin npx installs the checkout into its cache as a directory dependency,
// which runs the root `prepare` (rebuilding the console and the agent) on every call.
await import('../../bin/gatehouse.js');
