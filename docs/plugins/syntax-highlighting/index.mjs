// Points the theme's `prism-react-renderer` imports at src/components/CodeHighlight,
// which highlights with Prism's core and only the configured languages (see that file
// for the measurement behind it). The config file itself still reads its colour themes
// from the real package, in Node.
export default function syntaxHighlighting() {
  return {
    name: 'gatehouse-syntax-highlighting',
    configureWebpack() {
      return {
        resolve: {
          alias: {
            'prism-react-renderer$': new URL('../../src/components/CodeHighlight/index.tsx', import.meta.url)
              .pathname,
          },
        },
      };
    },
  };
}
