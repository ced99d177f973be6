import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import send from 'koa-send';
import { NotFound } from '../errors';
import type { ConsoleModuleEntry } from '../instance';
import type { Logger } from '../log';
import type { PluginManifest } from '../plugin';

export type { ConsoleModuleEntry };

/** Where the server serves a plugin's console module folder. */
export const CONSOLE_MODULES_PATH = '/console/plugins';

/** The console modules of the running plugins, in load order (the console fills its slots in that order). */
export function consoleModuleEntries(plugins: readonly PluginManifest[]): ConsoleModuleEntry[] {
  return plugins.flatMap((p) =>
    p.console
      ? [{ plugin: p.name, url: `${CONSOLE_MODULES_PATH}/${encodeURIComponent(p.name)}/${p.console.entry}` }]
      : [],
  );
}

/**
 * Serves each plugin's prebuilt console module folder under CONSOLE_MODULES_PATH, in a folder named after the
 * plugin: the files a module's entry imports (its chunks, styles, fonts), nothing outside the folder. A file that is not there is a 404, never the
 * console's index page, so a module script that fails to load says so instead of failing on an HTML body.
 */
export function consoleModulesRouter(plugins: readonly PluginManifest[], log: Logger): Router {
  const folders = new Map<string, string>();
  for (const p of plugins) {
    if (!p.console) continue;
    const dir = p.console.dir instanceof URL ? fileURLToPath(p.console.dir) : p.console.dir;
    if (!path.isAbsolute(dir))
      throw new Error(`plugin ${p.name}: console.dir must be an absolute path or a file: URL (got ${dir})`);
    if (!existsSync(path.join(dir, p.console.entry)))
      log.warn(
        { plugin: p.name, dir, entry: p.console.entry },
        'console module not built: the console will not show this plugin until it is',
      );
    folders.set(p.name, dir);
  }
  const router = new Router();
  router.get(`${CONSOLE_MODULES_PATH}/:plugin/*file`, async (ctx) => {
    const root = folders.get(ctx.params.plugin ?? '');
    if (!root) throw new NotFound('console module');
    let served: string;
    try {
      // koa-send refuses paths that leave the root (".." and absolute paths) and hidden files.
      served = await send(ctx, ctx.params.file ?? '', { root, maxage: 0, gzip: true });
    } catch {
      served = '';
    }
    if (!served) throw new NotFound('console module file');
  });
  return router;
}
