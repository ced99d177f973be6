import ApiReferencePage from '@site/src/components/ApiReference';
import type { ReactNode } from 'react';

// The document is generated from the server's route tables by scripts/export-api.mjs.
const load = () => import(/* webpackChunkName: "openapi-community" */ '@site/generated/community.json');

export default function CommunityApiReference(): ReactNode {
  return <ApiReferencePage edition="community" load={load} />;
}
