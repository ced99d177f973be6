import MDXComponents from '@theme-original/MDXComponents';
import { Children, type ComponentProps, isValidElement, type ReactElement, type ReactNode } from 'react';

/** The text of a React tree (the Markdown a table's header row was written in). */
function textOf(node: ReactNode): string {
  if (typeof node === 'string' || typeof node === 'number') return String(node);
  if (Array.isArray(node)) return node.map(textOf).join('');
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children);
  return '';
}

/** The header cells of a Markdown table: its first row's cells. */
function headerCells(children: ReactNode): string[] {
  const head = Children.toArray(children).find(isValidElement) as
    | ReactElement<{ children?: ReactNode }>
    | undefined;
  const row = Children.toArray(head?.props.children).find(isValidElement) as
    | ReactElement<{ children?: ReactNode }>
    | undefined;
  return Children.toArray(row?.props.children)
    .map((cell) => textOf(cell).trim())
    .filter(Boolean);
}

/**
 * Markdown tables scroll sideways when they are wider than the page (Infima makes each table its own scroll box),
 * so each is a tab stop named after its columns: a keyboard reader focuses it and scrolls it with the arrow keys.
 */
function Table({ children, ...props }: ComponentProps<'table'>): ReactNode {
  const columns = headerCells(children);
  const label = columns.length > 0 ? `Table of ${columns.join(', ')}` : 'Table';
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the table is its own scroll box; keyboard readers focus it to scroll
    <table tabIndex={0} aria-label={label} {...props}>
      {children}
    </table>
  );
}

export default { ...MDXComponents, table: Table };
