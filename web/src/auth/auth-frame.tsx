import type { ReactNode } from 'react';
import { ThemeToggle } from '../shell/layout';
import { Logo } from '../shell/ui/icons';

export function AuthFrame({
  title,
  subtitle,
  children,
}: {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
}) {
  return (
    <main className="auth">
      <div style={{ position: 'fixed', top: 12, right: 12 }}>
        <ThemeToggle />
      </div>
      <div className="auth-card">
        <div className="auth-brand">
          <Logo size={40} />
        </div>
        <div className="auth-title">
          <h1>{title}</h1>
          {subtitle ? <p className="muted">{subtitle}</p> : null}
        </div>
        <div className="card">
          <div className="card-body">{children}</div>
        </div>
      </div>
    </main>
  );
}
