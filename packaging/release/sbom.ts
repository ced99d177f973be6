import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, writeFileSync } from 'node:fs';
import path from 'node:path';
import { productVersion } from './layout';

/** A part of an artifact for its bill of materials. */
export interface Component {
  type: 'library' | 'application' | 'operating-system' | 'file';
  name: string;
  version: string;
  /** An SPDX licence id or expression, when the part names one. */
  license?: string;
  /** A package URL (`pkg:npm/ws@8.18.0`, `pkg:deb/debian/libc6@2.36`, `pkg:generic/node@20.20.2`). */
  purl?: string;
  description?: string;
}

/** `pkg:npm/...` of an npm package name (a scope's `@` is written %40). */
export function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, '%40')}@${version}`;
}

/** An npm package as a part of an artifact (and the product's own packages, at the product version). */
export function npmComponent(pkg: { name: string; version: string; license: string }): Component {
  return {
    type: 'library',
    name: pkg.name,
    version: pkg.version,
    license: pkg.license,
    purl: npmPurl(pkg.name, pkg.version),
  };
}

/** Hex SHA-256 of a file, streamed (the images and executables are tens of MiB). */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Writes the artifact's checksum file (`<file>.sha256`, the `sha256sum` format, so `sha256sum -c` checks it) and
 * its CycloneDX 1.5 bill of materials (`<file>.cdx.json`) listing what it contains. Answers the digest.
 */
export async function describeArtifact(
  file: string,
  subject: { name: string; description: string },
  components: Component[],
): Promise<string> {
  const digest = await sha256File(file);
  const base = path.basename(file);
  writeFileSync(`${file}.sha256`, `${digest}  ${base}\n`);
  const seen = new Set<string>();
  const unique = components.filter((c) => {
    const key = c.purl ?? `${c.name}@${c.version}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const bom = {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: new Date().toISOString(),
      tools: { components: [{ type: 'application', name: 'gatehouse release', version: productVersion }] },
      component: {
        type: 'application',
        'bom-ref': base,
        name: subject.name,
        version: productVersion,
        description: subject.description,
        hashes: [{ alg: 'SHA-256', content: digest }],
      },
    },
    components: unique.map((c) => ({
      type: c.type,
      'bom-ref': c.purl ?? `${c.name}@${c.version}`,
      name: c.name,
      version: c.version,
      ...(c.description ? { description: c.description } : {}),
      ...(c.license ? { licenses: [licenseEntry(c.license)] } : {}),
      ...(c.purl ? { purl: c.purl } : {}),
    })),
  };
  writeFileSync(`${file}.cdx.json`, `${JSON.stringify(bom, null, 2)}\n`);
  return digest;
}

/** A licence as the package states it: `MIT OR Apache-2.0` is an SPDX expression, anything else a name. */
function licenseEntry(license: string): { license: { name: string } } | { expression: string } {
  return /\s(OR|AND|WITH)\s/.test(license)
    ? { expression: license.replace(/^\((.*)\)$/, '$1') }
    : { license: { name: license } };
}
