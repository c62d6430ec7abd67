// A backfill's page: its progress (counts by status, running, pending,
// next firing, ETA), pause, resume, cancel and its priority, and its runs
// on a timeline: one bar per run from its start to its end (or now), in
// the order of the firings they stand for, coloured by status, each a link
// to its instance.

import { gate, loadAccess, needs, refusal, roleLine } from "../access";
import { api, type AccessView, type Backfill, type Instance } from "../api";
import { actionButton, badge, errorBox, poller, type Page } from "../app";
import { duration, h, link, s, time } from "../dom";
import { tone, workflowEnded } from "../status";

/** maxRunPages bounds the instance pages (of 100) read to find a backfill's runs. */
const maxRunPages = 20;

/**
 * backfillRuns pages through a workflow's instances, newest first, down to
 * the backfill's creation (no run of it is older), and keeps those its
 * initiator names; cut is set when maxRunPages ended the search first.
 */
export async function backfillRuns(id: string, b: Backfill): Promise<{ runs: Instance[]; cut: boolean }> {
  const runs: Instance[] = [];
  let cursor = "";
  for (let page = 0; page < maxRunPages; page++) {
    const p = await api.instances(id, "", cursor, 100);
    for (const i of p.workflow_instances) {
      if (i.initiator?.type === "BACKFILL" && i.initiator.backfill === b.backfill_id) runs.push(i);
    }
    const last = p.workflow_instances[p.workflow_instances.length - 1];
    cursor = p.next_cursor ?? "";
    if (!cursor || !last || (last.create_time ?? 0) < b.create_time) return { runs, cut: false };
  }
  return { runs, cut: true };
}

const ROW = 22;
const LABEL = 200;
const WIDTH = 900;

/**
 * drawRuns draws one row per run, in firing order, labelled with its
 * scheduled firing time; its bar spans its start to its end (or now) on a
 * shared wall-clock axis and links to the instance.
 */
export function drawRuns(wf: string, runs: Instance[], now: number): SVGSVGElement {
  const sorted = [...runs].sort((a, b) => (a.initiator?.scheduled_time ?? 0) - (b.initiator?.scheduled_time ?? 0));
  const started = sorted.filter((r) => r.start_time);
  // The stack's clock may run ahead of this browser's: now is never before a run's times.
  const late = Math.max(now, ...started.map((r) => Math.max(r.start_time ?? 0, r.end_time ?? 0, r.modify_time ?? 0)));
  const t0 = Math.min(...started.map((r) => r.start_time!), late);
  const t1 = Math.max(...started.map((r) => r.end_time || late), t0 + 1000);
  const span = t1 - t0;
  const plot = WIDTH - LABEL - 80;
  const height = (sorted.length + 1) * ROW + 8;
  const svg = s("svg", { class: "gantt", id: "backfill-timeline", width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "aria-label": "timeline of the backfill's runs" });
  for (let i = 0; i <= 4; i++) {
    const x = LABEL + (plot * i) / 4;
    svg.append(s("line", { x1: x, x2: x, y1: 0, y2: height - ROW + 4, class: "tick" }));
    svg.append(s("text", { x, y: height - 6, class: "axis", "text-anchor": "middle" }, "+" + duration((span * i) / 4)));
  }
  sorted.forEach((r, i) => {
    const y = i * ROW + 4;
    const fired = r.initiator?.scheduled_time;
    const label = fired ? new Date(fired).toISOString().replace(".000Z", "Z") : `#${r.workflow_instance_id}`;
    svg.append(s("text", { x: LABEL - 8, y: y + 14, class: "label", "text-anchor": "end" }, label));
    if (!r.start_time) return;
    const x = LABEL + ((r.start_time - t0) / span) * plot;
    const end = r.end_time || late;
    const w = Math.max(((end - r.start_time) / span) * plot, 2);
    const a = s("a", { href: `/ui/workflows/${encodeURIComponent(wf)}/instances/${r.workflow_instance_id}`, "data-nav": true, class: "run" });
    const bar = s("rect", { x, y: y + 3, width: w, height: ROW - 8, rx: 3, class: `bar tone-${tone(r.status)}`, "data-instance-id": r.workflow_instance_id, "data-status": r.status, "data-firing": label });
    bar.append(s("title", null, `#${r.workflow_instance_id} (firing ${label}): ${r.status}, ${duration(end - r.start_time)}${r.end_time ? "" : " so far"}`));
    a.append(bar);
    svg.append(a);
    svg.append(s("text", { x: x + w + 4, y: y + 14, class: "dur" }, `#${r.workflow_instance_id} ${duration(end - r.start_time)}`));
  });
  return svg;
}

const ended = (b: Backfill) => (b.status === "COMPLETED" || b.status === "CANCELLED") && b.running === 0;

function facts(b: Backfill): HTMLElement {
  const fact = (name: string, v: string | number) => [h("dt", null, name), h("dd", { "data-fact": name }, String(v))];
  const counts = Object.keys(b.counts).sort();
  return h(
    "dl",
    { class: "facts", id: "backfill-progress" },
    ...fact("firings", `${b.from} to ${b.to} (version ${b.workflow_version_id})`),
    ...fact("total", b.total),
    ...fact("admitted", b.admitted),
    ...fact("running", b.running),
    ...fact("pending", b.pending),
    ...counts.flatMap((k) => fact(k, b.counts[k])),
    ...fact("concurrency", b.concurrency),
    ...fact("next firing", b.next_firing ?? "—"),
    ...fact("ETA", b.eta_seconds === undefined ? "—" : duration(b.eta_seconds * 1000)),
    ...fact("created", `${time(b.create_time)}${b.principal ? ` by ${b.principal}` : ""}`),
    ...(b.end_time ? fact("ended", time(b.end_time)) : []),
  );
}

export function backfillPage(id: string, bid: string): Page {
  const err = h("div");
  const head = h("h1", { id: "backfill-title" }, `${id}: backfill ${bid}`);
  const status = h("p", { id: "backfill-status" });
  const progress = h("div");
  const controls = h("p", { id: "backfill-controls" });
  const timeline = h("div", { class: "gantt-wrap" });
  const note = h("p", { class: "muted", id: "backfill-runs-note" });
  const role = roleLine(undefined);
  const wfLink = `/ui/workflows/${encodeURIComponent(id)}`;
  const el = h(
    "section",
    null,
    h("p", { class: "crumbs" }, link("/ui/", "Workflows"), " / ", link(wfLink, id), " / backfill"),
    head,
    role,
    status,
    err,
    controls,
    progress,
    h("h2", null, "Runs"),
    note,
    timeline,
  );
  const priority = h("select", { "aria-label": "priority", id: "backfill-priority" }, h("option", { value: "normal" }, "normal"), h("option", { value: "low" }, "low"));
  let acc: AccessView | undefined;
  let stopPoll = () => {};
  const show = (b: Backfill) => {
    status.replaceChildren("status ", badge(b.status, tone(b.status)), ` · priority ${b.priority}`);
    progress.replaceChildren(facts(b));
    priority.value = b.priority;
  };
  const act = (label: string, action: string, confirmText?: string) =>
    gate(actionButton(label, async () => show(await api.backfillAction(id, bid, action)), err, restart, confirmText, action === "cancel"), acc, "start");
  const refresh = async () => {
    const b = await api.backfill(id, bid);
    show(b);
    const { runs, cut } = await backfillRuns(id, b);
    note.textContent = `${runs.length} runs started by this backfill, of ${b.admitted} admitted firings${cut ? ` (only the newest ${maxRunPages * 100} instances were searched)` : ""}.`;
    timeline.replaceChildren(runs.length ? drawRuns(id, runs, Date.now()) : h("p", { class: "muted" }, "No run yet."));
    return !ended(b) || runs.some((r) => !workflowEnded(r.status));
  };
  const restart = () => {
    stopPoll();
    stopPoll = poller(refresh, 3000, err);
  };
  priority.addEventListener("change", async () => {
    try {
      show(await api.backfillPriority(id, bid, priority.value));
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  });
  void loadAccess(id).then((v) => {
    acc = v;
    role.replaceWith(roleLine(v));
    const why = refusal(v, "start");
    if (why) {
      priority.disabled = true;
      priority.title = why;
      priority.setAttribute("data-needs", needs.start);
    }
    controls.replaceChildren(act("Pause", "pause"), " ", act("Resume", "resume"), " ", act("Cancel", "cancel", `Cancel backfill ${bid}? Its running instances are stopped.`), " priority ", priority);
  });
  restart();
  return { el, stop: () => stopPoll() };
}

/** backfillsTable lists a workflow's backfills, each linking to its page. */
export function backfillsTable(id: string, list: Backfill[]): HTMLElement {
  if (list.length === 0) return h("p", { class: "muted", id: "backfills" }, "No backfills.");
  const counts = (b: Backfill) =>
    Object.keys(b.counts)
      .sort()
      .map((k) => `${k} ${b.counts[k]}`)
      .join(", ") || "—";
  return h(
    "table",
    { class: "list", id: "backfills" },
    h("thead", null, h("tr", null, h("th", null, "Backfill"), h("th", null, "Status"), h("th", null, "Firings"), h("th", null, "Running"), h("th", null, "Pending"), h("th", null, "Ended"), h("th", null, "Priority"))),
    h(
      "tbody",
      null,
      ...list.map((b) =>
        h(
          "tr",
          { "data-backfill-id": b.backfill_id },
          h("td", null, link(`/ui/workflows/${encodeURIComponent(id)}/backfills/${encodeURIComponent(b.backfill_id)}`, b.backfill_id)),
          h("td", null, badge(b.status, tone(b.status))),
          h("td", null, `${b.total} (${b.from} to ${b.to})`),
          h("td", null, String(b.running)),
          h("td", null, String(b.pending)),
          h("td", null, counts(b)),
          h("td", null, b.priority),
        ),
      ),
    ),
  );
}
