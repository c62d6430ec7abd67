// What every page shares: the page's mount point, error banners, live
// refresh that stops when the page changes, and action buttons.

import { ApiError } from "./api";
import { h } from "./dom";

/** Page is a rendered route: its root element and a stop function. */
export interface Page {
  el: HTMLElement;
  stop?: () => void;
}

/** errorBox renders a failed call: the API's message and its field errors. */
export function errorBox(err: unknown): HTMLElement {
  if (err instanceof ApiError) {
    return h(
      "div",
      { class: "error", role: "alert" },
      h("strong", null, `${err.status}: ${err.message}`),
      err.errors.length ? h("ul", null, ...err.errors.map((e) => h("li", null, e))) : null,
    );
  }
  return h("div", { class: "error", role: "alert" }, String(err instanceof Error ? err.message : err));
}

/**
 * poller calls fn now and then every interval ms until stop is called or
 * fn returns false; a call that fails shows its error in errEl and keeps
 * polling. The top bar's "live" badge shows while it runs.
 */
export function poller(fn: () => Promise<boolean>, interval: number, errEl: HTMLElement): () => void {
  let stopped = false;
  let timer: number | undefined;
  const live = document.getElementById("live");
  const tick = async () => {
    let again = true;
    try {
      again = await fn();
      errEl.replaceChildren();
    } catch (err) {
      errEl.replaceChildren(errorBox(err));
    }
    if (live) live.hidden = !again || stopped;
    if (!stopped && again) timer = window.setTimeout(tick, interval);
  };
  void tick();
  return () => {
    stopped = true;
    if (timer !== undefined) window.clearTimeout(timer);
    if (live) live.hidden = true;
  };
}

/**
 * actionButton is a button that asks for confirmation (when confirm is set),
 * runs act, and reports its error in errEl; done runs after a success.
 */
export function actionButton(label: string, act: () => Promise<unknown>, errEl: HTMLElement, done: () => void, confirmText?: string, danger = false): HTMLButtonElement {
  const b = h("button", { type: "button", class: danger ? "danger" : "", "data-action": label.toLowerCase() }, label);
  b.addEventListener("click", async () => {
    if (confirmText && !window.confirm(confirmText)) return;
    b.disabled = true;
    try {
      await act();
      errEl.replaceChildren();
      done();
    } catch (err) {
      errEl.replaceChildren(errorBox(err));
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

/** badge renders a status. */
export function badge(status: string | undefined, tone: string): HTMLElement {
  return h("span", { class: `badge tone-${tone}`, "data-status": status ?? "" }, status ?? "—");
}
