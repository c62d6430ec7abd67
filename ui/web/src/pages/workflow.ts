// A workflow's page: its versions, triggers and properties, the DAG of a
// version, its backfills, and its instances with a status filter.

import { gate, grantCard, loadAccess, roleLine } from "../access";
import { api, type AccessView, type Definition, type Instance } from "../api";
import { actionButton, badge, errorBox, poller, type Page } from "../app";
import { dagSteps, drawDag } from "../dag";
import { duration, h, json, link, time } from "../dom";
import { navigate } from "../router";
import { tone } from "../status";
import { backfillsTable } from "./backfill";

const statuses = ["", "CREATED", "IN_PROGRESS", "PAUSED", "SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT"];

export function workflowPage(id: string, version: string): Page {
  const err = h("div");
  const head = h("div", { class: "cards" });
  const dag = h("div", { class: "dag-wrap" });
  const defErr = h("div");
  const versionSel = h("select", { "aria-label": "version" });
  const statusSel = h("select", { "aria-label": "status filter", id: "status-filter" }, ...statuses.map((st) => h("option", { value: st }, st || "any status")));
  const rows = h("tbody"); // the first page, refreshed while the page is open
  const older = h("tbody"); // the pages "More" added
  const more = h("button", { type: "button", hidden: true }, "More");
  const role = roleLine(undefined);
  const backfills = h("div", { id: "backfills-section" });
  const el = h(
    "section",
    null,
    h("p", { class: "crumbs" }, link("/ui/", "Workflows"), " / ", id),
    h("h1", null, id),
    role,
    err,
    head,
    h("h2", null, "Definition ", versionSel),
    defErr,
    dag,
    h("h2", null, "Backfills"),
    backfills,
    h("h2", null, "Instances ", statusSel),
    h(
      "table",
      { class: "list", id: "instances" },
      h("thead", null, h("tr", null, h("th", null, "Instance"), h("th", null, "Run"), h("th", null, "Version"), h("th", null, "Status"), h("th", null, "Started"), h("th", null, "Duration"))),
      rows,
      older,
    ),
    more,
  );

  let cursor = "";
  const row = (i: Instance) =>
    h(
      "tr",
      { "data-instance-id": i.workflow_instance_id },
      h("td", null, link(`/ui/workflows/${encodeURIComponent(id)}/instances/${i.workflow_instance_id}`, `#${i.workflow_instance_id}`)),
      h("td", null, String(i.workflow_run_id)),
      h("td", null, String(i.workflow_version_id)),
      h("td", null, badge(i.status, tone(i.status))),
      h("td", null, time(i.start_time || i.create_time)),
      h("td", null, i.start_time ? duration((i.end_time || Date.now()) - i.start_time) : ""),
    );
  // The first page refreshes while any instance on it is not done.
  const refresh = async () => {
    const page = await api.instances(id, statusSel.value);
    if (older.children.length === 0) {
      cursor = page.next_cursor ?? "";
      more.hidden = !cursor;
    }
    rows.replaceChildren(...page.workflow_instances.map(row));
    if (page.workflow_instances.length === 0) rows.replaceChildren(h("tr", null, h("td", { colspan: 6, class: "empty" }, "No instances.")));
    return true;
  };
  more.addEventListener("click", async () => {
    try {
      const page = await api.instances(id, statusSel.value, cursor);
      // Rows the refreshed first page already shows are not added twice.
      const shown = new Set(Array.from(rows.querySelectorAll("tr[data-instance-id]"), (r) => r.getAttribute("data-instance-id")));
      older.append(...page.workflow_instances.filter((i) => !shown.has(String(i.workflow_instance_id))).map(row));
      cursor = page.next_cursor ?? "";
      more.hidden = !cursor;
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  });
  let stopPoll = poller(refresh, 3000, err);
  if (!/^maestro_(foreach|while)_/.test(id)) {
    // Read once: a backfill's page follows its progress.
    api.backfills(id).then(
      (l) => backfills.replaceChildren(backfillsTable(id, l.backfills)),
      (e) => backfills.replaceChildren(errorBox(e)),
    );
  }
  statusSel.addEventListener("change", () => {
    stopPoll();
    cursor = "";
    rows.replaceChildren();
    older.replaceChildren();
    stopPoll = poller(refresh, 3000, err);
  });

  // The caller's role, fetched once: it disables what the role may not do.
  const access = loadAccess(id).then((v) => {
    role.replaceWith(roleLine(v));
    return v;
  });

  const showDefinition = (d: Definition, acc: AccessView | undefined) => {
    const wf = d.workflow;
    dag.replaceChildren(drawDag(dagSteps(wf.steps), () => ({})));
    const triggers = [...(wf.time_triggers ?? []), ...(wf.signal_triggers ?? [])];
    head.replaceChildren(
      h(
        "div",
        { class: "card" },
        h("h3", null, "Version"),
        h("p", null, `${d.metadata.workflow_version_id}${d.is_active ? " (active)" : ""}${d.is_latest ? " (latest)" : ""}`),
        h("p", { class: "muted" }, `pushed ${time(d.metadata.create_time)}${d.metadata.version_author ? ` by ${d.metadata.version_author.name}` : ""}`),
        d.metadata.workflow_version_id > 1
          ? h("p", null, link(`/ui/workflows/${encodeURIComponent(id)}/diff/${d.metadata.workflow_version_id - 1}/${d.metadata.workflow_version_id}`, "compare with previous"))
          : null,
        gate(
          actionButton("Start", async () => {
            const started = await api.start(id, String(d.metadata.workflow_version_id));
            navigate(`/ui/workflows/${encodeURIComponent(id)}/instances/${started.workflow_instance_id}`);
          }, err, () => {}),
          acc,
          "start",
        ),
      ),
      h("div", { class: "card" }, h("h3", null, "Triggers"), triggers.length ? json({ time_triggers: wf.time_triggers, signal_triggers: wf.signal_triggers }) : h("p", { class: "muted" }, "none")),
      h("div", { class: "card" }, h("h3", null, "Properties"), json(d.properties_snapshot ?? {})),
      ...(wf.params ? [h("div", { class: "card" }, h("h3", null, "Params"), json(wf.params))] : []),
      ...(acc ? [grantCard(acc)] : []),
    );
  };
  const loadVersion = async (v: string) => {
    if (/^maestro_(foreach|while)_/.test(id)) {
      // A loop's inline workflow has no stored version: its instances are
      // the loop's iterations, each drawn from its parent's definition.
      defErr.replaceChildren(h("p", { class: "muted" }, "The inline workflow of a foreach or while step: open an iteration below to see its DAG."));
      return undefined;
    }
    try {
      const [d, acc] = await Promise.all([api.version(id, v), access]);
      defErr.replaceChildren();
      showDefinition(d, acc);
      return d;
    } catch (e) {
      defErr.replaceChildren(errorBox(e));
      return undefined;
    }
  };
  void (async () => {
    const d = await loadVersion(version);
    if (!d) return;
    const latest = d.is_latest ? d.metadata.workflow_version_id : (await api.version(id, "latest")).metadata.workflow_version_id;
    for (let v = latest; v >= 1 && v > latest - 50; v--) versionSel.append(h("option", { value: v, selected: v === d.metadata.workflow_version_id }, `version ${v}`));
    versionSel.addEventListener("change", () => void loadVersion(versionSel.value));
  })();
  return {
    el,
    stop: () => stopPoll(),
  };
}
