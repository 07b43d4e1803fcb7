import { useEffect, useState } from "preact/hooks";

/** Where the console lives; every page's address is under it. */
export const BASE = "/console";

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => {
  for (const listener of listeners) listener();
});

/** The console path after BASE, with its leading slash (`/agents`), and the query. */
export function currentRoute(): { path: string; query: URLSearchParams } {
  const path = location.pathname.startsWith(`${BASE}/`) ? location.pathname.slice(BASE.length) : "/";
  return { path: path === "" ? "/" : path, query: new URLSearchParams(location.search) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  for (const listener of listeners) listener();
}

export function useRoute(): { path: string; query: URLSearchParams } {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return route;
}

/** A click on an in-console link changes the page without a reload; modified clicks keep their meaning. */
export function onLinkClick(event: MouseEvent, to: string): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
    return;
  event.preventDefault();
  navigate(to);
}
