import useDocusaurusContext from '@docusaurus/useDocusaurusContext';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';

const STORAGE_KEY = 'gatehouse.api-server';
/** Without a build setting (DOCS_API_SERVER), the address a first self-hosted server has. */
const FALLBACK = 'http://localhost:8080';

type Setting = [string, (server: string) => void];
const ApiServerContext = createContext<Setting>([FALLBACK, () => {}]);

/** One server for every "Try it" of the page: the build's DOCS_API_SERVER, then what the reader typed last. */
export function ApiServerProvider({ children }: { children: ReactNode }) {
  const { siteConfig } = useDocusaurusContext();
  const configured = (siteConfig.customFields?.apiServer as string | null | undefined) || FALLBACK;
  const [server, setServer] = useState(configured);
  useEffect(() => {
    const saved = window.localStorage.getItem(STORAGE_KEY);
    if (saved) setServer(saved);
  }, []);
  const choose = (value: string) => {
    setServer(value);
    if (value.trim()) window.localStorage.setItem(STORAGE_KEY, value.trim());
    else window.localStorage.removeItem(STORAGE_KEY);
  };
  return <ApiServerContext.Provider value={[server, choose]}>{children}</ApiServerContext.Provider>;
}

export function useApiServer(): Setting {
  return useContext(ApiServerContext);
}
