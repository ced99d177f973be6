// `npm run docs:version`: freezes docs/content as the docs of the version in the root package.json, the step of
// `npm run release` that keeps each release's docs. It writes versioned_docs/version-<v>/,
// versioned_sidebars/version-<v>-sidebars.json and adds <v> to versions.json (`docusaurus docs:version`); a version
// already frozen is left as it is, so running the release again changes nothing. The site serves content/ at its
// root under this version's label and hides that snapshot until the version moves on; from then it is listed as
// an older release (docusaurus.config.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const docsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(readFileSync(join(docsDir, '..', 'package.json'), 'utf8'));
const versions = JSON.parse(readFileSync(join(docsDir, 'versions.json'), 'utf8'));

if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version)) {
  console.error(`docs: the root package.json's version "${version}" is not a release version (x.y.z)`);
  process.exit(1);
}
if (versions.includes(version)) {
  console.log(`docs: version ${version} is already frozen in versioned_docs/version-${version}`);
} else {
  const docusaurus = createRequire(import.meta.url).resolve('@docusaurus/core/bin/docusaurus.mjs');
  execFileSync(process.execPath, [docusaurus, 'docs:version', version], {
    cwd: docsDir,
    stdio: 'inherit',
  });
  console.log(`docs: froze content/ as version ${version}; commit versioned_docs/ and versions.json`);
}
