// The diff of two versions of a workflow: both DAGs side by side, steps
// and edges added in green on the right, removed in red on the left,
// changed in amber on both (a loop whose body changed is amber too), and
// every change listed with its JSON path.

import { api, type Definition, type DiffChange, type VersionDiff } from "../api";
import { errorBox, type Page } from "../app";
import { dagSteps, drawDag } from "../dag";
import { h, link } from "../dom";
import { navigate } from "../router";

type Mark = "added" | "removed" | "changed";

/** Marks are the highlights of one side's DAG: top-level steps and edges ("from\0to"). */
interface Marks {
  nodes: Map<string, Mark>;
  edges: Map<string, Mark>;
}

/**
 * sideMarks reads the highlights of both sides from a diff. A step inside a
 * loop is not drawn (the DAG is the top level): the loop around it is
 * marked changed instead. Added and removed win over changed.
 */
export function sideMarks(d: VersionDiff): { left: Marks; right: Marks } {
  const left: Marks = { nodes: new Map(), edges: new Map() };
  const right: Marks = { nodes: new Map(), edges: new Map() };
  const put = (m: Map<string, Mark>, id: string, mark: Mark) => {
    if (mark !== "changed" || !m.has(id)) m.set(id, mark);
  };
  for (const s of d.steps.added) {
    const top = s.parents?.[0];
    if (!top) put(right.nodes, s.step_id, "added");
  }
  for (const s of d.steps.removed) {
    const top = s.parents?.[0];
    if (!top) put(left.nodes, s.step_id, "removed");
  }
  for (const s of d.steps.added) if (s.parents?.[0]) put(right.nodes, s.parents[0], "changed");
  for (const s of d.steps.removed) if (s.parents?.[0]) put(left.nodes, s.parents[0], "changed");
  for (const s of d.steps.changed) {
    put(left.nodes, (s.moved ? s.from_parents : s.parents)?.[0] ?? s.step_id, "changed");
    put(right.nodes, s.parents?.[0] ?? s.step_id, "changed");
  }
  const key = (from: string, to: string) => `${from}\u0000${to}`;
  for (const e of d.edges.added) right.edges.set(key(e.from, e.to), "added");
  for (const e of d.edges.removed) left.edges.set(key(e.from, e.to), "removed");
  for (const e of d.edges.changed) {
    left.edges.set(key(e.from, e.to), "changed");
    right.edges.set(key(e.from, e.to), "changed");
  }
  return { left, right };
}

/** drawSide draws a version's DAG with its highlights. */
function drawSide(def: Definition, marks: Marks): SVGSVGElement {
  const svg = drawDag(dagSteps(def.workflow.steps), () => ({}));
  for (const g of Array.from(svg.querySelectorAll("g.node"))) {
    const mark = marks.nodes.get(g.getAttribute("data-step-id") ?? "");
    if (mark) {
      g.classList.add(`diff-${mark}`);
      g.setAttribute("data-diff", mark);
    }
  }
  for (const p of Array.from(svg.querySelectorAll("path.edge"))) {
    const mark = marks.edges.get(`${p.getAttribute("data-from")}\u0000${p.getAttribute("data-to")}`);
    if (mark) {
      p.classList.add(`diff-${mark}`);
      p.setAttribute("data-diff", mark);
    }
  }
  return svg;
}

const shown = (v: unknown) => (v === undefined ? "(none)" : JSON.stringify(v));

function changeItem(kind: Mark, what: string, c: DiffChange, stepId?: string): HTMLLIElement {
  return h(
    "li",
    { class: kind, "data-kind": kind, "data-step-id": stepId ?? null, "data-path": c.path },
    `${what}: `,
    h("code", null, c.field || c.path),
    ` ${shown(c.from)} → ${shown(c.to)}`,
  );
}

/** changeList lists every entry of a diff, one item each. */
function changeList(d: VersionDiff): HTMLUListElement {
  const items: HTMLLIElement[] = [];
  const item = (kind: Mark, text: string, path: string, stepId?: string) =>
    h("li", { class: kind, "data-kind": kind, "data-step-id": stepId ?? null, "data-path": path }, text, " ", h("code", null, path));
  for (const s of d.steps.added) items.push(item("added", `step ${s.step_id} (${s.type || s.kind}) added at`, s.path, s.step_id));
  for (const s of d.steps.removed) items.push(item("removed", `step ${s.step_id} (${s.type || s.kind}) removed from`, s.path, s.step_id));
  for (const s of d.steps.changed) {
    if (s.moved) items.push(item("changed", `step ${s.step_id} moved from ${s.from_path} to`, s.path, s.step_id));
    for (const c of s.changes ?? []) items.push(changeItem("changed", `step ${s.step_id}`, c, s.step_id));
  }
  const cond = (c: string) => (c.trim() === "true" ? "" : ` when ${c}`);
  for (const e of d.edges.added) items.push(h("li", { class: "added", "data-kind": "added", "data-edge": `${e.from}->${e.to}` }, `edge ${e.from} → ${e.to}${cond(e.condition)} added`));
  for (const e of d.edges.removed) items.push(h("li", { class: "removed", "data-kind": "removed", "data-edge": `${e.from}->${e.to}` }, `edge ${e.from} → ${e.to}${cond(e.condition)} removed`));
  for (const e of d.edges.changed)
    items.push(h("li", { class: "changed", "data-kind": "changed", "data-edge": `${e.from}->${e.to}` }, `edge ${e.from} → ${e.to}: when ${e.from_condition} → when ${e.condition}`));
  for (const p of d.params.added) items.push(item("added", `param ${p.name} = ${shown(p.value)} added at`, p.path));
  for (const p of d.params.removed) items.push(item("removed", `param ${p.name} removed from`, p.path));
  for (const p of d.params.changed) for (const c of p.changes ?? []) items.push(changeItem("changed", `param ${p.name}`, c));
  for (const c of d.workflow) items.push(changeItem("changed", "workflow", c));
  for (const c of d.properties) items.push(changeItem("changed", "properties", c));
  if (items.length === 0) items.push(h("li", { class: "empty" }, "No changes."));
  return h("ul", { class: "changes", id: "diff-changes" }, ...items);
}

export function diffPage(id: string, from: string, to: string): Page {
  const err = h("div");
  const body = h("div");
  const wfLink = `/ui/workflows/${encodeURIComponent(id)}`;
  const fromSel = h("select", { "aria-label": "from version", id: "diff-from-version" });
  const toSel = h("select", { "aria-label": "to version", id: "diff-to-version" });
  const pick = () => navigate(`/ui/workflows/${encodeURIComponent(id)}/diff/${fromSel.value}/${toSel.value}`);
  fromSel.addEventListener("change", pick);
  toSel.addEventListener("change", pick);
  const el = h(
    "section",
    null,
    h("p", { class: "crumbs" }, link("/ui/", "Workflows"), " / ", link(wfLink, id), " / diff"),
    h("h1", { id: "diff-title" }, `${id}: version ${from} → version ${to}`),
    h("p", null, "Compare version ", fromSel, " with version ", toSel),
    err,
    body,
  );
  // The pickers offer the newest 50 versions, and the two compared.
  const fillPickers = (d: VersionDiff, latest: number) => {
    const versions = new Set<number>([d.from, d.to]);
    for (let v = latest; v >= 1 && v > latest - 50; v--) versions.add(v);
    const sorted = [...versions].sort((x, y) => y - x);
    fromSel.replaceChildren(...sorted.map((v) => h("option", { value: v, selected: v === d.from }, String(v))));
    toSel.replaceChildren(...sorted.map((v) => h("option", { value: v, selected: v === d.to }, String(v))));
  };
  void (async () => {
    try {
      const d = await api.diff(id, from, to);
      const [a, b] = await Promise.all([api.version(id, d.from), api.version(id, d.to)]);
      const latest = a.is_latest ? d.from : b.is_latest ? d.to : (await api.version(id, "latest")).metadata.workflow_version_id;
      fillPickers(d, latest);
      const { left, right } = sideMarks(d);
      const counts = `${d.steps.added.length} added, ${d.steps.removed.length} removed, ${d.steps.changed.length} changed steps; ` +
        `${d.edges.added.length} added, ${d.edges.removed.length} removed, ${d.edges.changed.length} changed edges`;
      el.querySelector("#diff-title")!.textContent = `${id}: version ${d.from} → version ${d.to}`;
      body.replaceChildren(
        h("p", { id: "diff-summary" }, counts),
        ...(d.truncated ? [h("p", { class: "error", id: "diff-truncated" }, `More than ${d.limit} entries changed: the first ${d.limit} are shown.`)] : []),
        h("p", { class: "legend" }, h("span", { class: "added" }, "added"), h("span", { class: "removed" }, "removed"), h("span", { class: "changed" }, "changed")),
        h(
          "div",
          { class: "diff-sides" },
          h("div", null, h("h2", null, link(`${wfLink}?version=${d.from}`, `version ${d.from}`)), h("div", { class: "dag-wrap", id: "diff-from" }, drawSide(a, left))),
          h("div", null, h("h2", null, link(`${wfLink}?version=${d.to}`, `version ${d.to}`)), h("div", { class: "dag-wrap", id: "diff-to" }, drawSide(b, right))),
        ),
        h("h2", null, "Changes"),
        changeList(d),
      );
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  })();
  return { el };
}
