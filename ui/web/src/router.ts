// Client-side routing under /ui/: links marked data-nav change the page
// without a reload, and the back button works.

import type { Page } from "./app";

type Route = { re: RegExp; page: (m: string[], q: URLSearchParams) => Page };

let routes: Route[] = [];
let current: Page | undefined;

/** setRoutes installs the route table; the first match of a path wins. */
export function setRoutes(r: Route[]): void {
  routes = r;
}

/** navigate shows the page of path and records it in the history. */
export function navigate(path: string): void {
  history.pushState(null, "", path);
  show();
}

/** show renders the page of the current location. */
export function show(): void {
  current?.stop?.();
  const app = document.getElementById("app")!;
  const path = location.pathname.replace(/\/+$/, "") || "/ui";
  for (const r of routes) {
    const m = r.re.exec(path);
    if (m) {
      current = r.page(m.slice(1).map(decodeURIComponent), new URLSearchParams(location.search));
      app.replaceChildren(current.el);
      return;
    }
  }
  current = undefined;
  const p = document.createElement("p");
  p.className = "error";
  p.textContent = `No page at ${location.pathname}.`;
  app.replaceChildren(p);
}

/** start wires link clicks and history navigation. */
export function start(): void {
  document.addEventListener("click", (ev) => {
    const a = (ev.target as Element | null)?.closest?.("a[data-nav]") as HTMLAnchorElement | null;
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    navigate(a.getAttribute("href")!);
  });
  window.addEventListener("popstate", show);
  show();
}
