import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './config/load';

/** The product version, from the root package.json. */
export const version: string = (
  JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;
