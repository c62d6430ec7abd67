// Signals: look one up by name, and a signal instance's lineage — who
// published it, the instances it triggered and the steps it unblocked.

import { api } from "../api";
import { errorBox, type Page } from "../app";
import { h, json, link, time } from "../dom";
import { navigate } from "../router";

interface LineageLink {
  kind: string;
  workflow_id: string;
  workflow_instance_id: number;
  step_id?: string;
  step_attempt_id?: number;
}

export function signalsPage(name = "", seq = ""): Page {
  const nameIn = h("input", { id: "signal-name", placeholder: "signal name", value: name });
  const seqIn = h("input", { id: "signal-seq", placeholder: "latest", value: seq, size: 8 });
  const go = h("button", { type: "submit" }, "Show");
  const err = h("div");
  const out = h("div");
  const form = h("form", { class: "actions" }, nameIn, seqIn, go);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (nameIn.value) navigate(`/ui/signals/${encodeURIComponent(nameIn.value)}/${encodeURIComponent(seqIn.value || "latest")}`);
  });
  const el = h("section", null, h("h1", null, "Signals"), form, err, out);
  if (name) {
    void (async () => {
      try {
        const lin = (await api.lineage(name, seq || "latest")) as {
          signal: { name: string; seq_id: number; params?: unknown; payload?: unknown; create_time: number; source?: Record<string, unknown> };
          published_by?: Record<string, unknown>;
          triggered: LineageLink[];
          unblocked: LineageLink[];
        };
        const href = (l: LineageLink) => `/ui/workflows/${encodeURIComponent(l.workflow_id)}/instances/${l.workflow_instance_id}`;
        const pub = lin.published_by;
        out.replaceChildren(
          h("h2", null, `${lin.signal.name} #${lin.signal.seq_id}`),
          h("p", { class: "muted" }, `announced ${time(lin.signal.create_time)}`),
          h("h3", null, "Published by"),
          pub && typeof pub["workflow_id"] === "string"
            ? h("p", null, link(`/ui/workflows/${encodeURIComponent(String(pub["workflow_id"]))}/instances/${pub["workflow_instance_id"]}`, `${pub["workflow_id"]} #${pub["workflow_instance_id"]}`), ` step ${pub["step_id"] ?? ""}`)
            : json(pub ?? lin.signal.source ?? {}),
          h("h3", null, "Params"),
          json(lin.signal.params ?? {}),
          h("h3", null, "Triggered"),
          lin.triggered.length ? h("ul", { id: "triggered" }, ...lin.triggered.map((l) => h("li", null, link(href(l), `${l.workflow_id} #${l.workflow_instance_id}`)))) : h("p", { class: "muted" }, "nothing"),
          h("h3", null, "Unblocked"),
          lin.unblocked.length ? h("ul", { id: "unblocked" }, ...lin.unblocked.map((l) => h("li", null, link(href(l), `${l.workflow_id} #${l.workflow_instance_id}`), ` step ${l.step_id ?? ""}`))) : h("p", { class: "muted" }, "nothing"),
        );
      } catch (e) {
        err.replaceChildren(errorBox(e));
      }
    })();
  }
  return { el };
}
