// The timeline: one bar per step attempt from its start to its end (or now,
// while it runs), on a shared time axis.

import { s } from "./dom";
import { duration } from "./dom";
import { tone } from "./status";

/** Bar is one attempt of a step. */
export interface Bar {
  step: string;
  attempt: number;
  status: string;
  start?: number;
  end?: number;
}

const ROW = 22;
const LABEL = 170;
const WIDTH = 860;

/** drawGantt draws bars (grouped by step, in the order given) against time; now ends running bars. */
export function drawGantt(bars: Bar[], now: number): SVGSVGElement {
  const started = bars.filter((b) => b.start);
  const t0 = Math.min(...started.map((b) => b.start!), now);
  const t1 = Math.max(...started.map((b) => b.end || now), t0 + 1000);
  const span = t1 - t0;
  const plot = WIDTH - LABEL - 80;
  const height = (bars.length + 1) * ROW + 8;
  const svg = s("svg", { class: "gantt", width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "aria-label": "timeline of step attempts" });
  // axis: five ticks
  for (let i = 0; i <= 4; i++) {
    const x = LABEL + (plot * i) / 4;
    svg.append(s("line", { x1: x, x2: x, y1: 0, y2: height - ROW + 4, class: "tick" }));
    svg.append(s("text", { x, y: height - 6, class: "axis", "text-anchor": "middle" }, "+" + duration((span * i) / 4)));
  }
  bars.forEach((b, i) => {
    const y = i * ROW + 4;
    svg.append(s("text", { x: LABEL - 8, y: y + 14, class: "label", "text-anchor": "end" }, `${b.step}${b.attempt > 1 ? ` #${b.attempt}` : ""}`));
    if (!b.start) return;
    const x = LABEL + ((b.start - t0) / span) * plot;
    const end = b.end || now;
    const w = Math.max(((end - b.start) / span) * plot, 2);
    const bar = s("rect", { x, y: y + 3, width: w, height: ROW - 8, rx: 3, class: `bar tone-${tone(b.status)}`, "data-step-id": b.step });
    bar.append(s("title", null, `${b.step} attempt ${b.attempt}: ${b.status}, ${duration(end - b.start)}${b.end ? "" : " so far"}`));
    svg.append(bar);
    svg.append(s("text", { x: x + w + 4, y: y + 14, class: "dur" }, duration(end - b.start)));
  });
  return svg;
}
