#!/usr/bin/env node
// `node scripts/side-by-side.mjs <npm script> <npm script> ...`: runs npm scripts at the same time, each line of
// their output prefixed with the script's name, and exits non-zero when any of them fails. `npm test` runs the
// browser suite beside the packaging suite this way: one waits mostly on Chromium and timers, the other on podman
// and dpkg, so together they take little longer than the longer one alone. The two share nothing they write: the
// release builds its agent in a folder of its own (packaging/release/main.ts), and what both read (the docs site)
// is built before either starts (docs/content/developers/development.md, "Tests").
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  console.error('usage: node scripts/side-by-side.mjs <npm script> [<npm script> ...]');
  process.exit(2);
}
const width = Math.max(...scripts.map((s) => s.length));
const started = Date.now();
const children = [];

const runs = scripts.map(
  (script) =>
    new Promise((done) => {
      const prefix = `[${script.padEnd(width)}] `;
      const child = spawn('npm', ['run', '--silent', script], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
      });
      children.push(child);
      for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix}${line}\n`));
      }
      child.on('error', (err) => {
        process.stdout.write(`${prefix}could not start: ${err.message}\n`);
        done({ script, code: 127 });
      });
      child.on('close', (code, signal) => {
        const seconds = Math.round((Date.now() - started) / 1000);
        process.stdout.write(
          `${prefix}finished ${signal ? `by ${signal}` : `with ${code}`} after ${seconds} s\n`,
        );
        done({ script, code: code ?? 1 });
      });
    }),
);

// Stopping this runner stops the suites too.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(130);
  });
}

const results = await Promise.all(runs);
const failed = results.filter((r) => r.code !== 0);
for (const r of failed) process.stdout.write(`${r.script} failed (exit ${r.code})\n`);
process.exit(failed.length === 0 ? 0 : 1);
