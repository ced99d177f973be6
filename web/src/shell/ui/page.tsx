import { createContext, type ReactNode, useContext, useEffect } from 'react';

/**
 * The level of the headings a part of a screen starts (an empty or error state's title): one below the nearest
 * heading above it. The screen's h1 is the page header's, so 2 on the page itself and 3 inside a card with a title
 * (its h2); levels are never skipped (axe heading-order).
 */
const HeadingLevel = createContext<2 | 3>(2);

export function SubHeading({ children }: { children: ReactNode }) {
  return useContext(HeadingLevel) === 3 ? <h3>{children}</h3> : <h2>{children}</h2>;
}

export function PageHeader({
  title,
  description,
  actions,
}: {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
}) {
  useEffect(() => {
    document.title = `${title} · Gatehouse`;
  }, [title]);
  return (
    <div className="page-head">
      <div>
        <h1>{title}</h1>
        {description ? <p className="muted">{description}</p> : null}
      </div>
      {actions ? <div className="row">{actions}</div> : null}
    </div>
  );
}

export function Card({
  title,
  actions,
  children,
  footer,
}: {
  title?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}) {
  return (
    <section className="card">
      {title || actions ? (
        <div className="card-head">
          {typeof title === 'string' ? <h2>{title}</h2> : title}
          {actions ? <div className="row">{actions}</div> : null}
        </div>
      ) : null}
      {title ? <HeadingLevel.Provider value={3}>{children}</HeadingLevel.Provider> : children}
      {footer ? <div className="card-foot">{footer}</div> : null}
    </section>
  );
}

export function formatDate(value: string | undefined | null): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime()) || date.getFullYear() < 1971) return '—';
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatRelative(value: string | undefined | null): string {
  if (!value) return 'never';
  const date = new Date(value);
  if (Number.isNaN(date.getTime()) || date.getFullYear() < 1971) return 'never';
  const seconds = Math.round((Date.now() - date.getTime()) / 1000);
  if (seconds < 45) return 'just now';
  const units: [number, string][] = [
    [60, 'minute'],
    [3600, 'hour'],
    [86400, 'day'],
    [2592000, 'month'],
    [31536000, 'year'],
  ];
  let chosen: [number, string] = units[0] as [number, string];
  for (const unit of units) if (Math.abs(seconds) >= unit[0]) chosen = unit;
  const count = Math.round(seconds / chosen[0]);
  return `${count} ${chosen[1]}${count === 1 ? '' : 's'} ago`;
}
