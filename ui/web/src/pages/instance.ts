// The instance page: the run's DAG coloured by step status and updated live,
// its actions, the selected step's details and actions, a Gantt timeline of
// step attempts, and the run's own timeline.

import { gate, loadAccess, roleLine } from "../access";
import { api, type AccessView, type Cost, type Definition, type Instance, type LoopEstimate, type Step, type StepBody, type StepDef, type Timeline } from "../api";
import { actionButton, badge, errorBox, poller, type Page } from "../app";
import { dagSteps, drawDag, type DagStep } from "../dag";
import { drawGantt, type Bar } from "../gantt";
import { duration, h, json, link, time } from "../dom";
import { tone, workflowEnded } from "../status";

const wfHref = (id: string) => `/ui/workflows/${encodeURIComponent(id)}`;
const instHref = (id: string, n: number) => `${wfHref(id)}/instances/${n}`;

// Definitions never change once stored: one fetch per workflow version.
const definitions = new Map<string, Promise<StepDef[]>>();

/**
 * stepsOf returns the step list an instance runs: its version's, or for a
 * foreach or while iteration (an instance of an inline workflow, which has
 * no stored version) the loop step's inner steps in its parent's definition.
 */
export function stepsOf(inst: Instance): Promise<StepDef[]> {
  const key = `${inst.workflow_id}@${inst.workflow_version_id}`;
  let p = definitions.get(key);
  if (!p) {
    p = (async () => {
      const parent = inst.initiator?.parent;
      const kind = inst.initiator?.type;
      if (parent && (kind === "FOREACH" || kind === "WHILE")) {
        const pi = await api.run(parent.workflow_id, parent.workflow_instance_id, parent.workflow_run_id);
        const steps = await stepsOf(pi);
        const loop = findStep(steps, parent.step_id);
        return loop?.steps ?? [];
      }
      const d: Definition = await api.version(inst.workflow_id, inst.workflow_version_id);
      return d.workflow.steps;
    })();
    p.catch(() => definitions.delete(key));
    definitions.set(key, p);
  }
  return p;
}

function findStep(steps: StepDef[], id: string): StepBody | undefined {
  for (const entry of steps) {
    for (const body of Object.values(entry)) if (body.id === id) return body;
  }
  return undefined;
}

type ActionMap = Record<string, string[]>;
let actionMaps: Promise<[ActionMap, ActionMap]> | undefined;
function maps(): Promise<[ActionMap, ActionMap]> {
  actionMaps ??= Promise.all([api.instanceActionMap(), api.stepActionMap()]);
  actionMaps.catch(() => (actionMaps = undefined));
  return actionMaps;
}

const URL_RE = /(https?:\/\/[^\s)]+)/g;

/** linkify turns the URLs in a timeline message (log links) into links. */
function linkify(text: string): (Node | string)[] {
  const out: (Node | string)[] = [];
  let last = 0;
  for (const m of text.matchAll(URL_RE)) {
    out.push(text.slice(last, m.index));
    out.push(h("a", { href: m[0], target: "_blank", rel: "noopener noreferrer" }, "logs ↗"));
    last = m.index! + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

function timelineList(entries: Timeline[] | undefined): HTMLElement {
  if (!entries?.length) return h("p", { class: "muted" }, "no entries");
  return h(
    "ol",
    { class: "timeline" },
    ...entries.map((e) => h("li", null, h("time", null, time(e.timestamp)), " ", e.status ? badge(e.status, tone(e.status)) : null, " ", ...linkify(e.message))),
  );
}

// costText is a run's cost, saying what it covers; costTitle lists its parts.
function costText(c: Cost): string {
  return `$${c.total_usd.toFixed(6)} (covers ${c.covers.join(", ")})`;
}

function costTitle(c: Cost): string {
  const parts = Object.entries(c.parts).sort(([a], [b]) => a.localeCompare(b)).map(([k, p]) => `${k} ${p.count}: $${p.usd.toFixed(6)}`);
  return [...parts, `prices of ${c.prices_of}`].join("\n");
}

function rollupText(r: { total_leaf_count: number; overview?: Record<string, { cnt: number }> } | undefined): string {
  if (!r) return "";
  const parts = Object.entries(r.overview ?? {}).map(([st, c]) => `${c.cnt} ${st}`);
  return `${r.total_leaf_count} leaf steps: ${parts.join(", ")}`;
}

export function instancePage(id: string, n: number): Page {
  const err = h("div");
  const header = h("div", { class: "inst-head" });
  const actions = h("div", { class: "actions", id: "instance-actions" });
  const dagBox = h("div", { class: "dag-wrap", id: "dag" });
  const detail = h("aside", { class: "detail", id: "step-detail" }, h("p", { class: "muted" }, "Select a step to see its params, outputs, attempts and actions."));
  const gantt = h("div", { class: "gantt-wrap", id: "gantt" });
  const runTimeline = h("div");
  const role = roleLine(undefined);
  const el = h(
    "section",
    null,
    h("p", { class: "crumbs" }, link("/ui/", "Workflows"), " / ", link(wfHref(id), id), " / ", `#${n}`),
    role,
    err,
    header,
    actions,
    h("div", { class: "split" }, dagBox, detail),
    h("h2", null, "Timeline of step attempts"),
    gantt,
    h("h2", null, "Run timeline"),
    runTimeline,
  );

  let inst: Instance | undefined;
  let steps: Step[] = [];
  let dag: DagStep[] = [];
  let selected: string | undefined;
  let detailKey = "";
  const earlier = new Map<string, Step>(); // step#attempt -> an earlier attempt (ended: never changes)
  // The caller's role on the workflow, fetched once: it disables the
  // actions the role may not take.
  let acc: AccessView | undefined;
  const access = loadAccess(id).then((v) => {
    acc = v;
    role.replaceWith(roleLine(v));
  });

  const refresh = async (): Promise<boolean> => {
    const [i, st] = await Promise.all([api.instance(id, n), api.steps(id, n)]);
    inst = i;
    steps = st;
    if (dag.length === 0) dag = dagSteps(await stepsOf(i));
    // earlier attempts, for the Gantt chart
    await Promise.all(
      steps.flatMap((s) =>
        Array.from({ length: s.step_attempt_id - 1 }, (_, k) => k + 1)
          .filter((a) => !earlier.has(`${s.step_id}#${s.workflow_run_id}#${a}`))
          .map(async (a) => earlier.set(`${s.step_id}#${s.workflow_run_id}#${a}`, await api.attempt(id, n, s.workflow_run_id, s.step_id, a))),
      ),
    );
    await render();
    return !workflowEnded(i.status);
  };

  const render = async () => {
    if (!inst) return;
    const i = inst;
    const [[instanceMap, stepMap]] = await Promise.all([maps(), access]);
    const parent = i.initiator?.parent;
    header.replaceChildren(
      h("h1", null, `${id} `, h("span", { class: "muted" }, `#${n}`), " ", h("span", { id: "instance-status" }, badge(i.status, tone(i.status)))),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Run"),
        h("dd", null, String(i.workflow_run_id)),
        h("dt", null, "Version"),
        h("dd", null, String(i.workflow_version_id)),
        h("dt", null, "Started"),
        h("dd", null, time(i.start_time || i.create_time) || "not yet"),
        h("dt", null, "Duration"),
        h("dd", null, i.start_time ? duration((i.end_time || Date.now()) - i.start_time) : ""),
        h("dt", null, "Initiator"),
        h(
          "dd",
          null,
          i.initiator?.type ?? "",
          i.initiator?.principal ? ` by ${i.initiator.principal}` : "",
          parent ? h("span", null, " of ", link(instHref(parent.workflow_id, parent.workflow_instance_id), `${parent.workflow_id} #${parent.workflow_instance_id}`), ` step ${parent.step_id}`) : null,
          ...signalLinks(i),
        ),
        h("dt", null, "Steps"),
        h("dd", null, Object.entries(i.runtime_overview?.step_overview ?? {}).map(([st, c]) => `${c} ${st}`).join(", ")),
        i.rollup_overview ? h("dt", null, "Rollup") : null,
        i.rollup_overview ? h("dd", null, rollupText(i.rollup_overview)) : null,
        i.cost ? h("dt", null, "Cost") : null,
        i.cost ? h("dd", { id: "instance-cost", title: costTitle(i.cost) }, costText(i.cost)) : null,
      ),
    );
    const allowed = instanceMap[i.status] ?? [];
    const reload = () => void refreshOnce();
    actions.replaceChildren(
      ...allowed.map((a) => {
        switch (a) {
          case "STOP":
            return gate(actionButton("Stop", () => api.instanceAction(id, n, "stop"), err, reload, `Stop ${id} #${n}? Running steps are stopped.`, true), acc, "stop");
          case "KILL":
            return gate(actionButton("Kill", () => api.instanceAction(id, n, "kill"), err, reload, `Kill ${id} #${n}? It ends FAILED.`, true), acc, "kill");
          case "UNBLOCK":
            return gate(actionButton("Unblock", () => api.instanceAction(id, n, "unblock"), err, reload), acc, "unblock");
          case "RESTART":
            return gate(actionButton("Restart", () => api.restartInstance(id, n), err, repoll), acc, "restart");
          default:
            return null;
        }
      }).filter((b): b is HTMLButtonElement => b !== null),
    );

    const byId = new Map(steps.map((s) => [s.step_id, s]));
    const info = (sid: string) => {
      const s = byId.get(sid);
      const status = i.step_statuses?.[sid] ?? s?.runtime_state.status ?? "NOT_CREATED";
      const loop = s?.foreach_overview ?? s?.while_overview;
      let detailText = "";
      if (loop) detailText = `${loop.status_counts?.["SUCCEEDED"] ?? 0}/${loop.total_loop_count || loop.next_loop_index}`;
      else if (s && s.step_attempt_id > 1) detailText = `#${s.step_attempt_id}`;
      return { status, detail: detailText };
    };
    dagBox.replaceChildren(drawDag(dag, info, (sid) => select(sid), selected));

    const bars: Bar[] = [];
    for (const d of dag) {
      const s = byId.get(d.id);
      if (!s) continue;
      for (let a = 1; a < s.step_attempt_id; a++) {
        const e = earlier.get(`${s.step_id}#${s.workflow_run_id}#${a}`);
        if (e) bars.push({ step: d.id, attempt: a, status: e.runtime_state.status, start: e.runtime_state.start_time, end: e.runtime_state.end_time });
      }
      bars.push({ step: d.id, attempt: s.step_attempt_id, status: s.runtime_state.status, start: s.runtime_state.start_time, end: s.runtime_state.end_time });
    }
    gantt.replaceChildren(bars.length ? drawGantt(bars, i.end_time || Date.now()) : h("p", { class: "muted" }, "No step has started."));
    runTimeline.replaceChildren(timelineList(i.timeline));

    if (selected) {
      const s = byId.get(selected);
      const key = JSON.stringify([s?.step_attempt_id, s?.runtime_state, s?.outputs, s?.foreach_overview, s?.while_overview, s?.subworkflow_overview, s?.timeline?.length]);
      if (key !== detailKey) {
        detailKey = key;
        detail.replaceChildren(stepDetail(selected, s, i, stepMap[s?.runtime_state.status ?? ""] ?? []));
      }
    }
  };

  const stepDetail = (sid: string, s: Step | undefined, i: Instance, allowed: string[]): HTMLElement => {
    const reload = () => void refreshOnce();
    const d = dag.find((x) => x.id === sid);
    if (!s) return h("div", null, h("h2", null, sid), h("p", null, badge(i.step_statuses?.[sid] ?? "NOT_CREATED", "none")), h("p", { class: "muted" }, "This step has not been created in this run."));
    const loop = s.foreach_overview ?? s.while_overview;
    const stepActions = allowed
      .map((a) => {
        switch (a) {
          case "STOP":
            return gate(actionButton("Stop step", () => api.stepAction(id, n, sid, "stop"), err, reload, `Stop step ${sid}?`, true), acc, "step action");
          case "KILL":
            return gate(actionButton("Kill step", () => api.stepAction(id, n, sid, "kill"), err, reload, `Kill step ${sid}?`, true), acc, "step action");
          case "SKIP":
            return gate(actionButton("Skip", () => api.stepAction(id, n, sid, "skip"), err, reload, `Skip step ${sid}?`), acc, "step action");
          case "BYPASS_STEP_DEPENDENCIES":
            return gate(actionButton("Bypass signals", () => api.stepAction(id, n, sid, "bypass"), err, reload, `Start ${sid} without the signals it waits for?`), acc, "step action");
          case "RESUME":
            return gate(actionButton("Resume", () => api.resumeStep(id, n, s.workflow_run_id, sid, s.step_attempt_id), err, reload), acc, "breakpoint");
          case "RESTART":
            return workflowEnded(i.status) || s.runtime_state.status !== "NOT_CREATED"
              ? gate(actionButton("Restart step", () => api.restartStep(id, n, sid), err, repoll, `Restart ${sid} and what is downstream of it?`), acc, "restart")
              : null;
          default:
            return null;
        }
      })
      .filter((b): b is HTMLButtonElement => b !== null);
    return h(
      "div",
      null,
      h("h2", null, sid),
      h("p", null, badge(s.runtime_state.status, tone(s.runtime_state.status)), " ", d?.type ?? s.step_type ?? "", ` · attempt ${s.step_attempt_id}`),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Started"),
        h("dd", null, time(s.runtime_state.start_time) || "not yet"),
        h("dt", null, "Duration"),
        h("dd", null, s.runtime_state.start_time ? duration((s.runtime_state.end_time || Date.now()) - s.runtime_state.start_time) : ""),
      ),
      stepActions.length ? h("div", { class: "actions" }, ...stepActions) : null,
      loop ? loopView(s, loop) : null,
      s.subworkflow_overview
        ? h(
            "div",
            null,
            h("h3", null, "Subworkflow"),
            h("p", null, link(instHref(s.subworkflow_overview.subworkflow_id, s.subworkflow_overview.subworkflow_instance_id), `${s.subworkflow_overview.subworkflow_id} #${s.subworkflow_overview.subworkflow_instance_id}`), s.subworkflow_overview.rollup ? ` — ${rollupText(s.subworkflow_overview.rollup)}` : ""),
          )
        : null,
      h("h3", null, "Outputs"),
      s.outputs && Object.keys(s.outputs).length ? json(s.outputs) : h("p", { class: "muted" }, "none"),
      h("h3", null, "Params"),
      json(s.params ?? {}),
      h("h3", null, "Attempt timeline"),
      timelineList(s.timeline),
    );
  };

  const loopView = (s: Step, loop: NonNullable<Step["foreach_overview"]>): HTMLElement => {
    const inline = loop.foreach_workflow_id ?? loop.while_workflow_id ?? "";
    const count = loop.next_loop_index;
    const shown = Math.min(count, 200);
    const running = new Set(loop.running_iterations ?? []);
    return h(
      "div",
      null,
      h("h3", null, s.foreach_overview ? "Iterations" : "While iterations"),
      h("p", null, `${count} started of ${loop.total_loop_count || "?"}; ${loop.running_count} running`, " — ", Object.entries(loop.status_counts ?? {}).map(([st, c]) => `${c} ${st}`).join(", ")),
      loop.rollup ? h("p", { class: "muted" }, rollupText(loop.rollup)) : null,
      s.foreach_overview ? estimateView(s) : null,
      loop.loop_param_values ? json(loop.loop_param_values) : null,
      h(
        "p",
        { class: "iterations" },
        ...Array.from({ length: shown }, (_, k) => k + 1).map((it) => link(instHref(inline, it), h("span", { class: running.has(it) ? "iter running" : "iter" }, String(it)))),
        count > shown ? h("span", { class: "muted" }, ` … ${count - shown} more`) : null,
      ),
    );
  };

  // estimateView is filled with the attempt's estimate, which its own view
  // carries (the steps list does not) when the loop is past the stack's
  // threshold; it stays empty otherwise.
  const estimateView = (s: Step): HTMLElement => {
    const box = h("p", { id: "foreach-estimate", class: "muted" });
    void api.attempt(id, n, s.workflow_run_id, s.step_id, s.step_attempt_id).then(
      (a) => {
        if (a.foreach_estimate) box.replaceChildren(estimateText(a.foreach_estimate));
      },
      () => undefined, // the estimate is extra: the step's view stands without it
    );
    return box;
  };

  const select = (sid: string) => {
    selected = sid;
    detailKey = "";
    void render();
  };

  const refreshOnce = async () => {
    try {
      const again = await refresh();
      stopPoll();
      if (again) stopPoll = poller(refresh, 1000, err);
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  };

  let stopPoll = poller(refresh, 1000, err);
  // A restart makes a new run: follow it live again.
  function repoll() {
    stopPoll();
    stopPoll = poller(refresh, 1000, err);
  }
  return { el, stop: () => stopPoll() };
}

function signalLinks(i: Instance): (Node | string)[] {
  const sigs = (i.initiator as { signals?: { name: string; seq_id: number }[] } | undefined)?.signals ?? [];
  return sigs.flatMap((sg) => [" ", link(`/ui/signals/${encodeURIComponent(sg.name)}/${sg.seq_id}`, `${sg.name} #${sg.seq_id}`)]);
}

// estimateText says what a large foreach is expected to take and cost.
function estimateText(e: LoopEstimate): string {
  const head = `Estimate: ${e.iterations} iterations (${e.steps} steps) in ${e.waves} wave${e.waves === 1 ? "" : "s"} of ${e.concurrency}`;
  const took = e.duration ? `${duration(e.duration.p50_ms)} (p90 ${duration(e.duration.p90_ms)})` : `duration unknown (${e.duration_reason ?? ""})`;
  const cost = e.cost ? `$${e.cost.p50_usd.toFixed(6)} (p90 $${e.cost.p90_usd.toFixed(6)}, covers ${e.cost.covers.join(", ")})` : `cost unknown (${e.cost_reason ?? ""})`;
  return `${head}: ${took}, ${cost}${e.from ? `; from ${e.from}` : ""}`;
}
