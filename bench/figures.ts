import { writeFileSync } from 'node:fs';

/**
 * `--json FILE` on a benchmark: besides its tables, it writes its key figures to FILE as JSON. `bench/run.ts`
 * (`npm run bench`) runs the issue-16 benchmarks one after another that way and prints every goal in one table.
 */
/** Takes `--json FILE` out of a benchmark's own argument list, for scripts that read the rest positionally. */
export function dropJsonFlag(args: string[]): void {
  const at = args.indexOf('--json');
  if (at >= 0) args.splice(at, 2);
}

export function writeFigures(figures: object): void {
  const at = process.argv.indexOf('--json');
  const file = at >= 0 ? process.argv[at + 1] : undefined;
  if (file) writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`);
}
