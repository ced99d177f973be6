import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One installed npm package that an artifact carries. */
export interface InstalledPackage {
  name: string;
  version: string;
  license: string;
  /** Its folder relative to the folder the search started from, e.g. `node_modules/ws`. */
  relative: string;
  dir: string;
}

interface Manifest {
  name: string;
  version: string;
  license?: string | { type?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** Where Node finds package `name` from `fromDir`: the nearest `node_modules/<name>` up to `top`. */
function resolvePackage(name: string, fromDir: string, top: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === top || path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The run-time closure of `roots` (package names looked up from `top`, plus the dependencies of the folders in
 * `fromFolders`) as installed under `top/node_modules`: dependencies, installed optional dependencies and installed
 * peers, each once, in path order. Workspace links (`@gatehouse/...`) are not packages to copy and are left out.
 */
export function runtimeClosure(top: string, fromFolders: string[], roots: string[]): InstalledPackage[] {
  const found = new Map<string, InstalledPackage>();
  const queue: { name: string; from: string; required: boolean }[] = [];
  const want = (manifest: Manifest, from: string) => {
    for (const name of Object.keys(manifest.dependencies ?? {})) queue.push({ name, from, required: true });
    for (const name of Object.keys({ ...manifest.optionalDependencies, ...manifest.peerDependencies })) {
      queue.push({ name, from, required: false });
    }
  };
  for (const folder of fromFolders) want(readManifest(path.join(top, folder)), path.join(top, folder));
  for (const name of roots) queue.push({ name, from: top, required: true });
  for (let next = queue.shift(); next; next = queue.shift()) {
    if (next.name.startsWith('@gatehouse/')) continue;
    const dir = resolvePackage(next.name, next.from, top);
    if (!dir) {
      if (next.required)
        throw new Error(`${next.name} (needed from ${next.from}) is not installed: run npm ci`);
      continue;
    }
    const relative = path.relative(top, dir);
    if (found.has(relative)) continue;
    const manifest = readManifest(dir);
    const license = typeof manifest.license === 'string' ? manifest.license : (manifest.license?.type ?? '');
    found.set(relative, { name: manifest.name, version: manifest.version, license, relative, dir });
    want(manifest, dir);
  }
  return [...found.values()].sort((a, b) => a.relative.localeCompare(b.relative));
}
