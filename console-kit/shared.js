/**
 * The modules the console shares with every plugin module through the import map in its page: one React (hooks and
 * context only work with one), one react-dom and one console kit (the session, the API client, the slots). A plugin
 * module leaves these imports to the page; the console maps each name to a file of its own build.
 */
export const sharedModules = [
  'react',
  'react/jsx-runtime',
  'react-dom',
  'react-dom/client',
  '@gatehouse/console',
];
