#!/usr/bin/env node
// The `gatehouse` command. TypeScript sources run through tsx's loader, so a checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli/main.ts');
