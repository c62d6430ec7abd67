// The DAG: a definition's steps laid out by dagre (a layered graph layout)
// and drawn as an SVG, each step a box coloured by its status.

import { Graph, layout } from "@dagrejs/dagre";
import type { StepDef, StepBody } from "./api";
import { s } from "./dom";
import { tone } from "./status";

/** DagStep is one node: its kind (step, foreach, while, subworkflow, template) and body. */
export interface DagStep {
  id: string;
  kind: string;
  type: string;
  successors: Record<string, string>;
}

/** dagSteps reads the nodes of a definition's step list. */
export function dagSteps(steps: StepDef[] | undefined): DagStep[] {
  const out: DagStep[] = [];
  for (const entry of steps ?? []) {
    const kind = Object.keys(entry)[0];
    if (!kind) continue;
    const body = entry[kind] as StepBody;
    out.push({
      id: body.id,
      kind,
      type: kind === "step" ? (body.type ?? "") : kind === "subworkflow" ? "Subworkflow" : kind,
      successors: body.transition?.successors ?? {},
    });
  }
  return out;
}

/** NodeInfo is what a node shows besides its id: a status and a detail line. */
export interface NodeInfo {
  status?: string;
  detail?: string;
}

const NODE_W = 190;
const NODE_H = 54;

/**
 * drawDag lays out steps and returns the SVG. info gives each step's status
 * and detail line; onSelect, when set, is called with a clicked step's id.
 */
export function drawDag(steps: DagStep[], info: (id: string) => NodeInfo, onSelect?: (id: string) => void, selected?: string): SVGSVGElement {
  const g = new Graph({ multigraph: false });
  g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 56, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(steps.map((st) => st.id));
  for (const st of steps) g.setNode(st.id, { width: NODE_W, height: NODE_H });
  for (const st of steps) {
    for (const [to, cond] of Object.entries(st.successors)) {
      if (ids.has(to)) g.setEdge(st.id, to, { cond: String(cond) });
    }
  }
  layout(g);
  const graph = g.graph();
  const width = Math.max(graph.width ?? 0, 200);
  const height = Math.max(graph.height ?? 0, 80);
  const svg = s("svg", {
    class: "dag",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `DAG of ${steps.length} steps`,
  });
  svg.append(
    s("defs", null, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))),
  );
  for (const e of g.edges()) {
    const edge = g.edge(e) as { points: { x: number; y: number }[]; cond?: string };
    const pts = edge.points;
    const d = pts.map((p, i) => `${i === 0 ? "M" : "L"} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(" ");
    const conditional = edge.cond !== undefined && edge.cond.trim() !== "true";
    const path = s("path", { d, class: conditional ? "edge conditional" : "edge", "marker-end": "url(#arrow)", "data-from": e.v, "data-to": e.w });
    if (conditional) path.append(s("title", null, `${e.v} → ${e.w} when ${edge.cond}`));
    svg.append(path);
  }
  for (const st of steps) {
    const n = g.node(st.id) as { x: number; y: number };
    const { status, detail } = info(st.id);
    const x = n.x - NODE_W / 2;
    const y = n.y - NODE_H / 2;
    const group = s("g", {
      class: `node tone-${tone(status)}${st.kind !== "step" ? " compound" : ""}${selected === st.id ? " selected" : ""}`,
      transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})`,
      "data-step-id": st.id,
      "data-status": status ?? "",
      tabindex: onSelect ? 0 : null,
    });
    group.append(s("title", null, `${st.id} (${st.type || st.kind})${status ? `: ${status}` : ""}`));
    group.append(s("rect", { width: NODE_W, height: NODE_H, rx: 7, ry: 7, class: "box" }));
    if (st.kind !== "step") group.append(s("rect", { x: 3, y: 3, width: NODE_W - 6, height: NODE_H - 6, rx: 5, ry: 5, class: "inner" }));
    group.append(s("text", { x: 12, y: 21, class: "id" }, clip(st.id, 24)));
    const second = [st.type || st.kind, status].filter(Boolean).join(" · ");
    group.append(s("text", { x: 12, y: 38, class: "sub" }, clip(second, 30)));
    if (detail) group.append(s("text", { x: NODE_W - 10, y: 21, class: "detail", "text-anchor": "end" }, clip(detail, 10)));
    if (onSelect) {
      group.addEventListener("click", () => onSelect(st.id));
      group.addEventListener("keydown", (ev) => {
        if ((ev as KeyboardEvent).key === "Enter") onSelect(st.id);
      });
    }
    svg.append(group);
  }
  return svg;
}

function clip(text: string, n: number): string {
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}
