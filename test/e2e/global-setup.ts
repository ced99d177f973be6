import { buildShared } from '../support/global-setup';
import { ensureDocsBuild } from './docs/docs-site';

/** The browser suite's builds, once before its files run in parallel: the shared ones and the docs site. */
export function mochaGlobalSetup(): void {
  buildShared();
  ensureDocsBuild();
}
