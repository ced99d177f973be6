import ApiReferencePage from '@site/src/components/ApiReference';
import type { ReactNode } from 'react';

// The document is generated from the server's route tables by scripts/export-api.mjs.
const load = () => import(/* webpackChunkName: "openapi-cloud" */ '@site/generated/cloud.json');

export default function CloudApiReference(): ReactNode {
  return <ApiReferencePage edition="cloud" load={load} />;
}
