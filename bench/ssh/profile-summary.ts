/**
 * Where a `node --cpu-prof` profile spends its time: self time by function and by package (or file), the top of
 * each. Usage: `npx tsx bench/ssh/profile-summary.ts server.cpuprofile [--top 25]`.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  console.error('usage: profile-summary.ts <file.cpuprofile> [--top N]');
  process.exit(2);
}
const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 25;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const ms = (profile.timeDeltas[i] ?? 0) / 1000;
  const frame = byId.get(id)?.callFrame;
  if (!frame) return;
  total += ms;
  const place = placeOf(frame.url);
  const fn = `${frame.functionName || '(anonymous)'} ${place}:${frame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  byPlace.set(place, (byPlace.get(place) ?? 0) + ms);
});

/** A package name for code under node_modules, the file otherwise, or V8's own names ((garbage collector)...). */
function placeOf(url: string): string {
  if (!url) return '(native)';
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (mod) return mod[1] as string;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '').replace(process.cwd(), '.');
}

const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title} (of ${total.toFixed(0)} ms sampled)`);
  for (const [name, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((ms / total) * 100).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
  }
};
print('self time by package or file', byPlace);
print('self time by function', byFunction);
