// Preview a definition: paste JSON, see the API's validation and the DAG
// before anything runs, then push it.

import { gate, loadAccess, roleLine } from "../access";
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
  const push = h("button", { type: "button", "data-action": "push" }, "Push");
  let role = roleLine(undefined);
  const el = h(
    "section",
    null,
    h("h1", null, "Preview a definition"),
    h("p", { class: "muted" }, "Paste a workflow definition (JSON). It is validated by the API; nothing is stored until you push it."),
    text,
    h("div", { class: "actions" }, check, push),
    err,
    ok,
    role,
    dag,
  );
  // draw draws the definition's DAG and returns its workflow id ("" when
  // it has none), or undefined when the text is not JSON.
  const draw = (): string | undefined => {
    let doc: { workflow?: { id?: unknown; steps?: [] } };
    try {
      doc = JSON.parse(text.value);
    } catch (e) {
      err.replaceChildren(errorBox(`not JSON: ${(e as Error).message}`));
      return undefined;
    }
    dag.replaceChildren(drawDag(dagSteps(doc.workflow?.steps), () => ({})));
    return typeof doc.workflow?.id === "string" ? doc.workflow.id : "";
  };
  // A changed text may name another workflow: Push is enabled again until
  // the next validation reads the caller's role on it.
  const showAccess = (view: Parameters<typeof roleLine>[0]) => {
    const next = roleLine(view);
    role.replaceWith(next);
    role = next;
    gate(push, view, "push");
  };
  text.addEventListener("input", () => showAccess(undefined));
  check.addEventListener("click", async () => {
    ok.hidden = true;
    err.replaceChildren();
    const id = draw();
    if (id === undefined) return;
    try {
      await api.validate(text.value);
      ok.textContent = "Valid.";
      ok.hidden = false;
      // Pushing a new version of a stored workflow needs its owner role
      // (a workflow not stored yet has no access: Push stays enabled).
      showAccess(id ? await loadAccess(id) : undefined);
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
