#!/usr/bin/env node
// gatehouse-agent from a checkout: the built bundle when there is one, else the
// TypeScript sources through tsx (npm run build -w agent makes the bundle).
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/gatehouse-agent/gatehouse-agent.mjs', import.meta.url);
if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../main.ts');
}
