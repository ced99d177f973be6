/**
 * Syntax highlighting for the docs' code blocks, built on Prism's core alone.
 *
 * The client bundle gets this module wherever the theme imports `prism-react-renderer`
 * (plugins/syntax-highlighting). That package evaluates some twenty bundled grammars at
 * start-up, on every page, and each grammar that extends another walks all of them: a
 * quarter of the main bundle's start-up work in a CPU profile, for languages these docs
 * never show. Here only the grammars of `themeConfig.prism.additionalLanguages` are
 * registered (by the theme's prism-include-languages client module, on this `Prism`).
 * The component keeps the render-prop contract the theme's CodeBlock uses.
 */
import './manual-mode';
import clsx from 'clsx';
import type { Token, TokenStream } from 'prismjs';
import PrismCore from 'prismjs/components/prism-core';
import { type CSSProperties, type ReactNode, useCallback, useMemo } from 'react';

export const Prism: typeof PrismCore = PrismCore;

type Style = CSSProperties & Record<string, unknown>;
interface Theme {
  plain: Style;
  styles: { types: string[]; languages?: string[]; style: Style }[];
}
/** One piece of a line, with the Prism token types it is nested in. */
export interface LineToken {
  types: string[];
  content: string;
  empty?: boolean;
}
type PrismStream = (string | Token)[];

/** Prism's nested token stream as lines of flat tokens (what the theme's Line renders). */
export function tokensToLines(stream: PrismStream): LineToken[][] {
  let line: LineToken[] = [];
  const lines: LineToken[][] = [line];
  const add = (types: string[], content: string) => {
    const parts = content.split(/\r\n|\r|\n/);
    parts.forEach((part, index) => {
      if (index > 0) {
        line = [];
        lines.push(line);
      }
      line.push({ types, content: part });
    });
  };
  const walk = (items: PrismStream | TokenStream, inherited: string[]) => {
    for (const item of Array.isArray(items) ? items : [items]) {
      if (typeof item === 'string') {
        add(inherited.length > 0 ? inherited : ['plain'], item);
        continue;
      }
      const types = [...inherited];
      for (const type of [item.type, ...([] as string[]).concat(item.alias ?? [])]) {
        if (types[types.length - 1] !== type) types.push(type);
      }
      if (typeof item.content === 'string') add(types, item.content);
      else walk(item.content, types);
    }
  };
  walk(stream, []);
  // An empty line still needs one token so that it keeps its height.
  for (const each of lines) {
    if (each.length === 0) each.push({ types: ['plain'], content: '\n', empty: true });
    else if (each.length === 1 && each[0]?.content === '')
      Object.assign(each[0], { content: '\n', empty: true });
  }
  return lines;
}

/** Token type -> style for one language; `root` styles the block, `plain` each line. */
function styleDictionary(theme: Theme, language: string): Record<string, Style> {
  const dictionary: Record<string, Style> = {};
  for (const entry of theme.styles) {
    if (entry.languages && !entry.languages.includes(language)) continue;
    for (const type of entry.types) dictionary[type] = { ...dictionary[type], ...entry.style };
  }
  dictionary.root = theme.plain;
  dictionary.plain = { ...theme.plain, backgroundColor: undefined };
  return dictionary;
}

interface RenderProps {
  tokens: LineToken[][];
  className: string;
  style: Style;
  getLineProps(input: { line: LineToken[]; className?: string; style?: Style }): Record<string, unknown>;
  getTokenProps(input: { token: LineToken; className?: string; style?: Style }): Record<string, unknown> & {
    children: string;
  };
}

interface HighlightProps {
  code: string;
  language: string;
  theme: Theme;
  children(props: RenderProps): ReactNode;
}

export function Highlight({ code, language: requested, theme, children }: HighlightProps): ReactNode {
  const language = requested.toLowerCase();
  const dictionary = useMemo(() => styleDictionary(theme, language), [theme, language]);
  const tokens = useMemo(() => {
    const grammar = Prism.languages[language];
    if (!grammar) return tokensToLines([code]);
    const environment = { code, grammar, language, tokens: [] as PrismStream };
    Prism.hooks.run('before-tokenize', environment);
    environment.tokens = Prism.tokenize(code, grammar);
    Prism.hooks.run('after-tokenize', environment);
    return tokensToLines(environment.tokens);
  }, [code, language]);

  const getLineProps = useCallback<RenderProps['getLineProps']>(
    ({ line: _line, className, style, ...rest }) => ({
      ...rest,
      className: clsx('token-line', className),
      style: { ...dictionary.plain, ...style },
    }),
    [dictionary],
  );
  const getTokenProps = useCallback<RenderProps['getTokenProps']>(
    ({ token, className, style, ...rest }) => {
      const plainOnly = token.types.length === 1 && token.types[0] === 'plain';
      const typeStyle: Style | undefined = plainOnly
        ? undefined
        : Object.assign({}, ...token.types.map((type) => dictionary[type]));
      const emptyStyle: Style | undefined = token.empty ? { display: 'inline-block' } : undefined;
      const merged = typeStyle || emptyStyle || style ? { ...emptyStyle, ...typeStyle, ...style } : undefined;
      return {
        ...rest,
        className: clsx('token', ...token.types, className),
        children: token.content,
        style: merged,
      };
    },
    [dictionary],
  );

  return children({
    tokens,
    className: `prism-code language-${language}`,
    style: dictionary.root ?? {},
    getLineProps,
    getTokenProps,
  });
}
