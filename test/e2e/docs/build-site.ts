// `node --import tsx test/e2e/docs/build-site.ts`: builds the docs site when its sources changed since the last
// build. `npm test` runs it before the browser and packaging suites start side by side, since both read the site.
import { ensureDocsBuild } from './docs-site';

ensureDocsBuild();
