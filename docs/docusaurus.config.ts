import { readFileSync } from 'node:fs';
import type * as Preset from '@docusaurus/preset-classic';
import type { Config } from '@docusaurus/types';
import { themes as prismThemes } from 'prism-react-renderer';

// Everything a deployment may want to change comes from the environment, so the same
// source builds the public site and a copy served by a self-hosted Gatehouse server.
const siteUrl = process.env.DOCS_SITE_URL ?? 'https://docs.gatehouse.example';
const baseUrl = process.env.DOCS_BASE_URL ?? '/';
// The hosted product (planned) and the public source repository have no address of their own yet: a build shows
// their links only when it is given a real one, never a placeholder host.
const cloudUrl = process.env.DOCS_CLOUD_URL || undefined;
const repositoryUrl = process.env.DOCS_REPOSITORY_URL || undefined;

// An external search service is optional; without these three values the site uses its
// own offline index (plugins/local-search) and needs no outside service at all.
const algoliaAppId = process.env.DOCS_ALGOLIA_APP_ID;
const algoliaApiKey = process.env.DOCS_ALGOLIA_API_KEY;
const algoliaIndexName = process.env.DOCS_ALGOLIA_INDEX_NAME;
const externalSearch =
  algoliaAppId && algoliaApiKey && algoliaIndexName
    ? { appId: algoliaAppId, apiKey: algoliaApiKey, indexName: algoliaIndexName }
    : undefined;

// The site root serves docs/content, labelled with the version the release ships (the root package.json's).
// Snapshots in versioned_docs/ (made by `npm run docs:version`, which the release runs) are older releases,
// each under its own path with a banner; the snapshot of the version being shipped stays hidden until the
// version moves on, so no release appears twice. See docs/content/developers/development.md.
const productVersion = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const olderReleases = (
  JSON.parse(readFileSync(new URL('./versions.json', import.meta.url), 'utf8')) as string[]
).filter((version) => version !== productVersion);

type PrismTheme = typeof prismThemes.github;

/** A Prism theme with some token colours replaced, to keep code text at 4.5:1 contrast or more. */
function withTokenColours(theme: PrismTheme, colours: Record<string, string>): PrismTheme {
  return {
    ...theme,
    styles: theme.styles.map((entry) => {
      const colour = entry.types.map((type) => colours[type]).find(Boolean);
      return colour ? { ...entry, style: { ...entry.style, color: colour } } : entry;
    }),
  };
}

const lightCode = withTokenColours(prismThemes.github, {
  comment: '#57606a',
  prolog: '#57606a',
  doctype: '#57606a',
  cdata: '#57606a',
  boolean: '#0b6e6e',
  constant: '#0b6e6e',
  variable: '#0b6e6e',
  'attr-name': '#0b6e6e',
  tag: '#1f4fa8',
  entity: '#a12a6c',
});
const darkCode = withTokenColours(prismThemes.dracula, {
  comment: '#a3acd6',
  prolog: '#a3acd6',
  doctype: '#a3acd6',
  cdata: '#a3acd6',
});

const config: Config = {
  title: 'Gatehouse',
  tagline: 'Seamless remote access to any Linux device',
  favicon: 'img/favicon.svg',
  url: siteUrl,
  baseUrl,
  // Shows the built-in warning banner when the site is served under a different base URL.
  baseUrlIssueBanner: true,
  onBrokenLinks: 'throw',
  onBrokenAnchors: 'throw',
  trailingSlash: undefined,
  i18n: { defaultLocale: 'en', locales: ['en'] },
  markdown: {
    // Plain .md pages are CommonMark, so `<device-user>` in prose needs no escaping;
    // .mdx pages (the generated reference) may import components.
    format: 'detect',
    hooks: { onBrokenMarkdownLinks: 'throw' },
  },
  future: {
    // v4 behaviour, except CSS cascade layers: their polyfill raises Infima's selectors
    // above the site's own palette in src/css/custom.css.
    v4: {
      removeLegacyPostBuildHeadAttribute: true,
      useCssCascadeLayers: false,
      siteStorageNamespacing: true,
      fasterByDefault: true,
      mdx1CompatDisabledByDefault: true,
    },
    // Rspack and SWC: about three times faster builds on the two-core machines we use.
    faster: true,
  },
  // apiServer: the Gatehouse server the API reference's "Try it" sends to first (the reader may change it).
  customFields: {
    cloudUrl: cloudUrl ?? null,
    repositoryUrl: repositoryUrl ?? null,
    apiServer: process.env.DOCS_API_SERVER || null,
  },
  presets: [
    [
      'classic',
      {
        docs: {
          path: 'content',
          routeBasePath: '/',
          sidebarPath: './sidebars.ts',
          editUrl: undefined,
          lastVersion: 'current',
          onlyIncludeVersions: ['current', ...olderReleases],
          versions: {
            current: { label: productVersion, banner: 'none' },
            ...Object.fromEntries(
              olderReleases.map((version) => [
                version,
                { label: `${version} (older release)`, path: version, banner: 'unmaintained' as const },
              ]),
            ),
          },
        },
        blog: false,
        theme: { customCss: './src/css/custom.css' },
        sitemap: { changefreq: 'weekly', priority: 0.5 },
      } satisfies Preset.Options,
    ],
  ],
  // Chunks load when a link is pointed at or touched, not when it scrolls into view (see the module).
  clientModules: ['./src/client/prefetch-on-intent.ts'],
  plugins: [
    'docusaurus-plugin-image-zoom',
    './plugins/html-redirects/index.mjs',
    './plugins/syntax-highlighting/index.mjs',
    ...(externalSearch ? [] : ['./plugins/local-search/index.mjs']),
  ],
  themeConfig: {
    colorMode: { defaultMode: 'dark', disableSwitch: false, respectPrefersColorScheme: false },
    announcementBar: {
      id: `gatehouse-${productVersion}`,
      content: `Gatehouse ${productVersion} is out: self-hosted SSH access to every device, with no inbound ports on the device.`,
      isCloseable: true,
    },
    tableOfContents: { minHeadingLevel: 2, maxHeadingLevel: 3 },
    zoom: {
      selector: '.markdown img',
      // medium-zoom closes the overlay once the page scrolls this many pixels.
      config: {
        scrollOffset: 40,
        margin: 24,
        background: { light: 'rgb(255, 255, 255)', dark: 'rgb(27, 27, 29)' },
      },
    },
    navbar: {
      title: 'Gatehouse',
      // Width and height reserve the logo's box before it loads (no layout shift).
      logo: { alt: 'Gatehouse logo', src: 'img/logo.svg', width: 32, height: 32 },
      hideOnScroll: false,
      items: [
        { type: 'docSidebar', sidebarId: 'overview', position: 'left', label: 'Overview' },
        { type: 'docSidebar', sidebarId: 'selfHosted', position: 'left', label: 'Self-hosted' },
        { type: 'docSidebar', sidebarId: 'userGuides', position: 'left', label: 'User guides' },
        { type: 'docSidebar', sidebarId: 'adminGuides', position: 'left', label: 'Admin guides' },
        { type: 'docSidebar', sidebarId: 'developers', position: 'left', label: 'Developers' },
        { type: 'docsVersionDropdown', position: 'right', dropdownActiveClassDisabled: true },
        { type: 'search', position: 'right' },
        ...(repositoryUrl
          ? [
              {
                href: repositoryUrl,
                position: 'right' as const,
                label: 'Source',
                'aria-label': 'Source repository',
              },
            ]
          : []),
        ...(cloudUrl
          ? [
              {
                href: cloudUrl,
                position: 'right' as const,
                label: 'Get Started',
                className: 'navbar-get-started',
              },
            ]
          : []),
      ],
    },
    footer: {
      style: 'dark',
      links: [
        {
          title: 'Documentation',
          items: [
            { label: 'Getting started', to: '/overview/getting-started' },
            { label: 'Self-hosted', to: '/self-hosted/deploying' },
            { label: 'User guides', to: '/user-guides/devices/adding' },
          ],
        },
        {
          title: 'API',
          items: [
            { label: 'Community API', to: '/developers/openapi/community' },
            { label: 'Cloud API', to: '/developers/openapi/cloud' },
          ],
        },
        {
          title: 'Project',
          items: [
            { label: 'Editions', to: '/overview/editions' },
            ...(repositoryUrl ? [{ label: 'Source repository', href: repositoryUrl }] : []),
            ...(cloudUrl ? [{ label: 'Gatehouse Cloud', href: cloudUrl }] : []),
          ],
        },
      ],
      copyright: `Copyright © ${new Date().getFullYear()} the Gatehouse authors. Apache-2.0.`,
    },
    prism: {
      theme: lightCode,
      darkTheme: darkCode,
      // The only grammars the site loads (plugins/syntax-highlighting): those its pages use.
      additionalLanguages: ['bash', 'ini', 'json', 'yaml'],
    },
    ...(externalSearch
      ? { algolia: { ...externalSearch, contextualSearch: false, searchPagePath: 'search' } }
      : {}),
  } satisfies Preset.ThemeConfig,
};

export default config;
