import { type ReactNode, useEffect, useRef, useState } from 'react';

/**
 * A frame a wide table scrolls sideways in, so the page itself never gets wider than the screen. While its content
 * is wider than it, the frame is a named region that takes focus, so keyboard users can scroll it too (axe's
 * scrollable-region-focusable); when everything fits it is no tab stop.
 */
export function ScrollFrame({ label, children }: { label: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const check = () => setScrolls(el.scrollWidth > el.clientWidth + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div
      ref={ref}
      className="table-wrap"
      {...(scrolls ? { tabIndex: 0, role: 'region', 'aria-label': `${label} (scrolls sideways)` } : {})}
    >
      {children}
    </div>
  );
}
