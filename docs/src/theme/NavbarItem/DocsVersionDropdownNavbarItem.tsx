import {
  useActiveDocContext,
  useDocsPreferredVersion,
  useLatestVersion,
  useVersions,
} from '@docusaurus/plugin-content-docs/client';
import type { Props } from '@theme/NavbarItem/DocsVersionDropdownNavbarItem';
import DropdownNavbarItem from '@theme/NavbarItem/DropdownNavbarItem';
import Original from '@theme-original/NavbarItem/DocsVersionDropdownNavbarItem';
import type { ReactNode } from 'react';

/**
 * The docs version menu. On a docs page it is Docusaurus's own menu (the page's version,
 * links to the same page in the other version, and the choice saved in local storage).
 * Elsewhere (API references, search) Docusaurus would show the current version whatever
 * the reader chose, because the current docs are served at the site root and so every
 * path looks like one of theirs; there the menu shows the stored choice instead
 * (the docs version choice is kept in local storage).
 */
export default function DocsVersionDropdownNavbarItem(props: Props): ReactNode {
  const { docsPluginId, mobile, dropdownActiveClassDisabled } = props;
  const { activeDoc } = useActiveDocContext(docsPluginId);
  const { preferredVersion, savePreferredVersionName } = useDocsPreferredVersion(docsPluginId);
  const versions = useVersions(docsPluginId);
  const latest = useLatestVersion(docsPluginId);
  if (activeDoc) return <Original {...props} />;
  const shown = preferredVersion ?? latest;
  const items = versions.map((version) => ({
    label: version.label,
    to: version.docs.find((doc) => doc.id === version.mainDocId)?.path ?? version.path,
    isActive: () => version.name === shown.name,
    onClick: () => savePreferredVersionName(version.name),
  }));
  return (
    <DropdownNavbarItem
      mobile={mobile}
      position={props.position}
      label={mobile ? 'Versions' : shown.label}
      to={items.find((item) => item.isActive())?.to}
      items={items}
      isActive={dropdownActiveClassDisabled ? () => false : undefined}
    />
  );
}
