#!/usr/bin/env node
// Run by npm after it installs the Gatehouse server package (its postinstall): the server's parts import each other
// by package name (@gatehouse/core, @gatehouse/plugin-community ...), and those names must lead to the folders this
// package carries. npm drops symbolic links from a package tarball, so they are made here, relative, beside the
// bundled dependencies.
import { mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { workspaceLinks } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const [name, folder] of Object.entries(workspaceLinks)) {
  const link = join(root, 'node_modules', name);
  mkdirSync(dirname(link), { recursive: true });
  rmSync(link, { recursive: true, force: true });
  symlinkSync(relative(dirname(link), join(root, folder)), link, 'dir');
}
