import { type DeviceFacts, type FilterColumns, filterMatches } from '../matching/device-filter';
import type { PatternCache } from '../matching/pattern';

export interface RuleRow extends FilterColumns {
  id: string;
  tenant_id: string;
  priority: number;
  action: 'allow' | 'deny';
  active: boolean;
  source_ip: string;
  username: string;
}

/** One connection as the firewall sees it. */
export interface Attempt {
  ip: string;
  username: string;
  device: DeviceFacts;
}

export interface Verdict {
  action: 'allow' | 'deny';
  /** The rule that decided, if any did. */
  rule?: RuleRow;
}

/**
 * Firewall evaluation (see docs/content/developers/gateway.md): active rules only, lowest priority number first, first match wins.
 * A rule matches when its source IP expression, user name expression and device filter all match. Without a
 * matching rule the connection is allowed. Ties in priority keep creation order, so the outcome is stable.
 */
export function evaluate(rules: RuleRow[], attempt: Attempt, patterns: PatternCache): Verdict {
  const ordered = rules.filter((r) => r.active).sort((a, b) => a.priority - b.priority);
  for (const rule of ordered) {
    if (!patterns.test(rule.source_ip, attempt.ip)) continue;
    if (!patterns.test(rule.username, attempt.username)) continue;
    if (!filterMatches(rule, attempt.device, patterns)) continue;
    return { action: rule.action, rule };
  }
  return { action: 'allow' };
}
