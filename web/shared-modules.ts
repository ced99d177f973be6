import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { HtmlTagDescriptor, Plugin } from 'vite';
import { sharedModules } from '../console-kit/shared.js';

// Plugin console modules are built apart from the console and import React, react-dom and `@gatehouse/console` by
// name. This Vite plugin makes each of those names an entry of the console's own build (so the console and every
// plugin module use one copy of each) and writes the import map that resolves the names to those files into
// index.html. The map is an inline script: the server allows it in its Content-Security-Policy by its hash, as it
// does the page's other inline script.

const VIRTUAL = '\0gatehouse-shared:';
const kitSource = fileURLToPath(new URL('./src/shell/index.ts', import.meta.url));
const requireFromWeb = createRequire(import.meta.url);

/** The entry name of a shared module in the console's build, e.g. `shared-react-jsx-runtime`. */
const entryName = (name: string) => `shared-${name.replace(/^@/, '').replace(/[^A-Za-z0-9]+/g, '-')}`;

/**
 * React's packages are CommonJS: an ES module re-exporting one names each export explicitly, read from the package
 * at build time so a React upgrade that adds an export needs no edit here.
 */
function reexport(name: string): string {
  const exports = Object.keys(requireFromWeb(name) as object).filter((key) => /^[A-Za-z_$][\w$]*$/.test(key));
  return [
    `import shared from ${JSON.stringify(name)};`,
    'export default shared;',
    `export const { ${exports.join(', ')} } = shared;`,
  ].join('\n');
}

export function sharedModulesPlugin(): Plugin {
  const idOf = (name: string) => (name === '@gatehouse/console' ? kitSource : VIRTUAL + name);
  return {
    name: 'gatehouse-shared-modules',
    config(_, { command }) {
      if (command !== 'build') return;
      const input: Record<string, string> = { main: fileURLToPath(new URL('./index.html', import.meta.url)) };
      for (const name of sharedModules) input[entryName(name)] = idOf(name);
      return { build: { rollupOptions: { input, preserveEntrySignatures: 'exports-only' } } };
    },
    resolveId(id) {
      if (id.startsWith(VIRTUAL)) return id;
      if (id.startsWith('virtual:gatehouse-shared/'))
        return VIRTUAL + id.slice('virtual:gatehouse-shared/'.length);
      return null;
    },
    load(id) {
      return id.startsWith(VIRTUAL) ? reexport(id.slice(VIRTUAL.length)) : null;
    },
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx): HtmlTagDescriptor[] {
        const imports: Record<string, string> = {};
        for (const name of sharedModules) {
          if (ctx.bundle) {
            const chunk = Object.values(ctx.bundle).find(
              (file) => file.type === 'chunk' && file.isEntry && file.name === entryName(name),
            );
            if (!chunk) throw new Error(`the console build has no entry for the shared module ${name}`);
            imports[name] = `/${chunk.fileName}`;
          } else {
            // The dev server: the same names, served from source through Vite's own module graph.
            imports[name] =
              name === '@gatehouse/console' ? '/src/shell/index.ts' : `/@id/virtual:gatehouse-shared/${name}`;
          }
        }
        return [
          {
            tag: 'script',
            attrs: { type: 'importmap' },
            children: JSON.stringify({ imports }),
            injectTo: 'head-prepend',
          },
        ];
      },
    },
  };
}
