// The workflows page: every stored workflow with its versions and owner.

import { api } from "../api";
import { errorBox, type Page } from "../app";
import { h, link, time } from "../dom";

export function workflowsPage(): Page {
  const err = h("div");
  const body = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "More");
  const el = h(
    "section",
    null,
    h("h1", null, "Workflows"),
    err,
    h(
      "table",
      { class: "list", id: "workflows" },
      h("thead", null, h("tr", null, h("th", null, "Workflow"), h("th", null, "Active version"), h("th", null, "Latest version"), h("th", null, "Instances"), h("th", null, "Owner"), h("th", null, "Changed"))),
      body,
    ),
    more,
  );
  let cursor = "";
  const load = async () => {
    try {
      const page = await api.workflows(cursor);
      if (!cursor && page.workflows.length === 0) {
        body.append(h("tr", null, h("td", { colspan: 6, class: "empty" }, "No workflows yet: push one with `maestro push FILE` or preview a definition.")));
      }
      for (const w of page.workflows) {
        const owner = w.properties_snapshot?.["owner"];
        body.append(
          h(
            "tr",
            { "data-workflow-id": w.workflow_id },
            h("td", null, link(`/ui/workflows/${encodeURIComponent(w.workflow_id)}`, w.workflow_id)),
            h("td", null, w.active_version_id ? String(w.active_version_id) : h("span", { class: "muted" }, "inactive")),
            h("td", null, String(w.latest_version_id)),
            h("td", null, String(w.instance_count)),
            h("td", null, typeof owner === "string" ? owner : ""),
            h("td", null, time(w.modify_time)),
          ),
        );
      }
      cursor = page.next_cursor ?? "";
      more.hidden = !cursor;
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  };
  more.addEventListener("click", () => void load());
  void load();
  return { el };
}
