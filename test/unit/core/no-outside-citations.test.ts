import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { expect } from 'chai';

/*
 * A reader of the repository has only the repository: a comment, string or page states its rule, or points to a page
 * of docs/content/developers/ (architecture.md explains this). It never sends the reader to the product's planning
 * documents or to a numbered issue, which they cannot open. The pattern is built from pieces so that this file does
 * not match it.
 */
const documents = ['SPEC', 'DESIGN', 'STYLE'].map((name) => `${name}\\.md`);
const issueNumber = `${'[Ii]ss'}${'ues?'} #?[0-9]+`;
const citation = new RegExp([...documents, issueNumber].join('|'));

/** Files the check reads nothing of: generated, and holding no prose. */
const skipped = new Set(['package-lock.json']);

/** Every tracked file, as `git ls-files` lists them, that is a regular file holding text. */
function trackedTextFiles(): { file: string; text: string }[] {
  const listed = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((file) => file !== '' && !skipped.has(file));
  return listed.flatMap((file) => {
    // A file deleted in the working tree but not yet in the index, or a symbolic link, has no text of its own.
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile()) return [];
    const bytes = readFileSync(file);
    // Binary files (images, fonts, archives) hold a NUL byte early on; text never does.
    if (bytes.subarray(0, 8000).includes(0)) return [];
    return [{ file, text: bytes.toString('utf8') }];
  });
}

/** Each `file:line: text` of `text` that cites what a reader does not have. */
function citations(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) => (citation.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('no citations a reader of the repository cannot follow', () => {
  it('flags the planning documents and issue numbers, and leaves RFC sections and PKCS#1 alone', () => {
    const flagged = [
      `rows keep the names ${'SPEC'}.md gives`,
      `(${'DESIGN'}.md section 7)`,
      `(${'STYLE'}.md example 6)`,
      `(${'issue'} 12, item 3)`,
      `${'Issue'} 11: a server that crashed`,
      `fixed in ${'issue'} #42`,
      `everything of ${'issues'} 13 to 15`,
    ];
    for (const line of flagged) expect(citations('f', line), line).to.deep.equal([`f:1: ${line}`]);
    const kept = [
      'RFC 4252 section 7',
      'PKCS#1 PEM private key',
      'verifies signature, issuer and expiry',
      'see docs/content/developers/architecture.md',
    ];
    for (const line of kept) expect(citations('f', line), line).to.deep.equal([]);
  });

  it('finds none in any tracked text file', () => {
    const files = trackedTextFiles();
    expect(files.map((f) => f.file)).to.include.members(['README.md', 'core/errors.ts', 'bench/RESULTS.md']);
    const found = files.flatMap(({ file, text }) => citations(file, text));
    expect(
      found,
      `state the rule or point to docs/content/developers/ instead:\n${found.join('\n')}`,
    ).to.deep.equal([]);
  });
});
