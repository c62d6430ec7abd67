// Preview a definition: paste JSON, see the API's validation and the DAG
// before anything runs, then push it.

import { api } from "../api";
import { errorBox, type Page } from "../app";
import { dagSteps, drawDag } from "../dag";
import { h } from "../dom";
import { navigate } from "../router";

export function previewPage(): Page {
  const text = h("textarea", { id: "definition", rows: 16, spellcheck: false, placeholder: '{"properties": {"owner": "me"}, "workflow": {"id": "my-wf", "steps": [...]}}' });
  const err = h("div");
  const ok = h("p", { class: "ok", hidden: true });
  const dag = h("div", { class: "dag-wrap", id: "preview-dag" });
  const check = h("button", { type: "button" }, "Validate and draw");
  const push = h("button", { type: "button" }, "Push");
  const el = h(
    "section",
    null,
    h("h1", null, "Preview a definition"),
    h("p", { class: "muted" }, "Paste a workflow definition (JSON). It is validated by the API; nothing is stored until you push it."),
    text,
    h("div", { class: "actions" }, check, push),
    err,
    ok,
    dag,
  );
  const draw = (): boolean => {
    let doc: { workflow?: { steps?: [] } };
    try {
      doc = JSON.parse(text.value);
    } catch (e) {
      err.replaceChildren(errorBox(`not JSON: ${(e as Error).message}`));
      return false;
    }
    dag.replaceChildren(drawDag(dagSteps(doc.workflow?.steps), () => ({})));
    return true;
  };
  check.addEventListener("click", async () => {
    ok.hidden = true;
    err.replaceChildren();
    if (!draw()) return;
    try {
      await api.validate(text.value);
      ok.textContent = "Valid.";
      ok.hidden = false;
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  });
  push.addEventListener("click", async () => {
    err.replaceChildren();
    try {
      const res = await api.push(text.value);
      navigate(`/ui/workflows/${encodeURIComponent(res.workflow_definition.metadata.workflow_id)}`);
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  });
  return { el };
}
