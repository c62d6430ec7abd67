// Access: the caller's role on a workflow, and which actions it may take.
// The API decides every request; the UI only disables the buttons of the
// actions it would refuse, and says which role each needs.

import { api, type AccessView } from "./api";
import { h } from "./dom";

/** Role is what a caller may do to a workflow, from the least to the most. */
export type Role = "none" | "reader" | "operator" | "owner";

const order: Role[] = ["none", "reader", "operator", "owner"];

/**
 * needs is the role each workflow action needs: the UI's only copy of the
 * rule, named as package access names the actions (access/actions.go,
 * `needs`; ui/access_test.go fails when the two differ).
 *
 * Roles are ordered none < reader < operator < owner, and a caller may take
 * an action when its role is at least the one the action needs: readers
 * read; operators also start, stop, kill, unblock and restart runs, act on
 * steps, resume breakpoints and write output data; owners also push new
 * versions, activate, deactivate, change properties and tags, delete and
 * set the access. When the stack does not enforce access, nothing is
 * disabled.
 */
export const needs = {
  read: "reader",
  push: "owner",
  activate: "owner",
  deactivate: "owner",
  "update properties": "owner",
  tag: "owner",
  delete: "owner",
  "set access": "owner",
  start: "operator",
  stop: "operator",
  kill: "operator",
  unblock: "operator",
  restart: "operator",
  "step action": "operator",
  breakpoint: "operator",
  "output data": "operator",
  "start as a subworkflow": "operator",
} as const satisfies Record<string, Role>;

/** Action is a workflow action the UI can offer. */
export type Action = keyof typeof needs;

/**
 * refusal is why the caller may not take action a, or undefined when it
 * may: when the access is unknown (an older API without the access route)
 * or not enforced, every action is left to the API.
 */
export function refusal(view: AccessView | undefined, a: Action): string | undefined {
  if (!view || !view.enforced) return undefined;
  const need: Role = needs[a];
  const have = order.includes(view.role as Role) ? (view.role as Role) : "none";
  if (order.indexOf(have) >= order.indexOf(need)) return undefined;
  return `${a} needs the ${need} role; you hold ${have}`;
}

/**
 * gate disables b, with a tooltip naming the role needed, when the caller
 * may not take action a, and enables a button it disabled before when the
 * caller may; it returns b.
 */
export function gate(b: HTMLButtonElement, view: AccessView | undefined, a: Action): HTMLButtonElement {
  const why = refusal(view, a);
  if (why) {
    b.disabled = true;
    b.title = why;
    b.setAttribute("data-needs", needs[a]);
  } else if (b.hasAttribute("data-needs")) {
    b.disabled = false;
    b.removeAttribute("title");
    b.removeAttribute("data-needs");
  }
  return b;
}

/**
 * loadAccess fetches a workflow's access once; undefined when the fetch
 * fails (an API without the route answers 404 or 405), so that the page
 * behaves as it did before access existed.
 */
export async function loadAccess(id: string): Promise<AccessView | undefined> {
  try {
    return await api.access(id);
  } catch {
    return undefined;
  }
}

/** roleLine says the caller's role, and when access is not enforced. */
export function roleLine(view: AccessView | undefined): HTMLElement {
  const p = h("p", { class: "muted", id: "access-role" });
  if (!view) return p;
  p.append("your role: ", h("strong", { "data-role": view.role }, view.role));
  if (!view.enforced) p.append(" · ", h("span", { id: "access-open" }, "access not enforced"));
  return p;
}

/** grantCard shows a workflow's owners, operators and readers. */
export function grantCard(view: AccessView): HTMLElement {
  const list = (name: string, entries: string[]) => [
    h("dt", null, name),
    h("dd", { "data-list": name }, entries.length ? entries.join(", ") : h("span", { class: "muted" }, "nobody")),
  ];
  return h(
    "div",
    { class: "card", id: "access" },
    h("h3", null, "Access"),
    h("dl", { class: "facts" }, ...list("owners", view.owners), ...list("operators", view.operators), ...list("readers", view.readers)),
    h("p", { class: "muted" }, "owners change it: maestro access set"),
  );
}
