// End-to-end test of the web UI in headless Chromium, driven by
// playwright-core. test/ui_test.go runs it against a local stack:
//
//   MAESTRO_UI_URL   the stack's base URL (required)
//   MAESTRO_SAMPLE   a definition file to push through the preview page (required)
//   MAESTRO_SCREENSHOTS  a directory for screenshots (optional)
//   CHROMIUM         the browser (default /usr/bin/chromium)
//
// It pushes the sample through the preview page, starts it from its
// workflow page, waits on the instance page until the SVG DAG shows every
// step SUCCEEDED, then starts a long-running workflow, clicks Stop on its
// instance page and waits until the page shows STOPPED; then, on a run with
// a foreach and a subworkflow step, opens an iteration and the child from the
// step details and sees their DAGs. Every failed check throws; the exit code
// is 0 only when all hold.
import { launchChromium, reportFailure } from "./browser.mjs";
import { readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const base = process.env.MAESTRO_UI_URL;
const samplePath = process.env.MAESTRO_SAMPLE;
if (!base || !samplePath) {
  console.error("MAESTRO_UI_URL and MAESTRO_SAMPLE must be set");
  process.exit(2);
}
const shots = process.env.MAESTRO_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });
const sample = readFileSync(samplePath, "utf8");
const sampleDoc = JSON.parse(sample);
const sampleId = sampleDoc.workflow.id;
const stepIds = sampleDoc.workflow.steps.map((s) => Object.values(s)[0].id);

const longId = `ui-e2e-long-${Date.now()}`;
const longDef = JSON.stringify({
  properties: { owner: "ui-e2e" },
  workflow: {
    id: longId,
    steps: [
      { step: { id: "extract", type: "NoOp", transition: { successors: { wait: "true" } } } },
      { step: { id: "wait", type: "Sleep", params: { sleep_seconds: { value: 600, type: "LONG" } }, transition: { successors: { load: "true" } } } },
      { step: { id: "load", type: "NoOp" } },
    ],
  },
});

const log = (...a) => console.log(new Date().toISOString(), ...a);

const browser = await launchChromium();
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(30_000);
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // A workflow not stored yet (the preview page's) has no access to read:
  // its 404 is expected, and Chromium logs every failed fetch as an error.
  const expected404 = (m) => m.text().includes("status of 404") && /\/api\/v3\/workflows\/[^/]+\/access$/.test(m.location().url);
  page.on("console", (m) => m.type() === "error" && !expected404(m) && errors.push(`${m.text()} (${m.location().url})`));
  page.on("dialog", (d) => d.accept());

  // 1. Preview the sample's DAG, then push it.
  await page.goto(`${base}/ui/definitions/preview`);
  await page.fill("#definition", sample);
  await page.click("button:text-is(\"Validate and draw\")");
  await page.waitForSelector("p.ok:has-text('Valid.')");
  for (const id of stepIds) await page.waitForSelector(`#preview-dag svg g.node[data-step-id="${id}"]`);
  log(`preview drew ${stepIds.length} steps`);
  await page.click("button:text-is(\"Push\")");
  await page.waitForURL(`**/ui/workflows/${sampleId}`);

  // 2. Start it from the workflow page; the instance page opens.
  await page.click("button[data-action=start]");
  await page.waitForURL(/\/instances\/\d+$/);
  const instanceURL = page.url();
  log(`started: ${instanceURL}`);

  // 3. The DAG turns green: every step's node says SUCCEEDED.
  await page.waitForFunction(
    (ids) => ids.every((id) => document.querySelector(`#dag svg g.node[data-step-id="${id}"]`)?.getAttribute("data-status") === "SUCCEEDED"),
    stepIds,
    { timeout: 60_000 },
  );
  await page.waitForSelector("#instance-status [data-status=SUCCEEDED]");
  // Its cost says what it covers: its steps are billed no compute the
  // runtime records, its orchestration a few millionths of a dollar.
  const cost = await page.textContent("#instance-cost");
  if (!/^\$0\.0000\d\d \(covers fargate, lambda_steps, orchestration\)$/.test(cost ?? "") || cost.startsWith("$0.000000")) {
    throw new Error(`instance cost shows ${JSON.stringify(cost)}`);
  }
  const texts = await page.$$eval("#dag svg g.node", (ns) => ns.map((n) => n.textContent));
  for (const id of stepIds) {
    if (!texts.some((t) => t.includes(id) && t.includes("SUCCEEDED"))) throw new Error(`node ${id} does not show its id and SUCCEEDED: ${texts}`);
  }
  log(`DAG of ${stepIds.length} steps is SUCCEEDED`);
  // A step's details open on click.
  await page.click(`#dag svg g.node[data-step-id="${stepIds[0]}"]`);
  await page.waitForSelector(`#step-detail h2:has-text("${stepIds[0]}")`);
  await page.waitForSelector("#gantt svg rect.bar");
  if (shots) await page.screenshot({ path: join(shots, "ui-instance.png"), fullPage: true });

  // 4. Another run: push and start a long one, stop it from its page.
  const pushed = await page.evaluate(async (def) => (await fetch("/api/v3/workflows", { method: "POST", headers: { "Content-Type": "application/json" }, body: def })).status, longDef);
  if (pushed !== 200) throw new Error(`push ${longId}: HTTP ${pushed}`);
  await page.goto(`${base}/ui/workflows/${longId}`);
  await page.click("button[data-action=start]");
  await page.waitForURL(/\/instances\/\d+$/);
  await page.waitForFunction(() => document.querySelector('#dag svg g.node[data-step-id="wait"]')?.getAttribute("data-status") === "RUNNING", null, { timeout: 60_000 });
  log(`${page.url()}: step wait is RUNNING`);
  await page.click("#instance-actions button[data-action=stop]");
  await page.waitForSelector("#instance-status [data-status=STOPPED]", { timeout: 60_000 });
  await page.waitForFunction(() => document.querySelector('#dag svg g.node[data-step-id="wait"]')?.getAttribute("data-status") === "STOPPED", null, { timeout: 30_000 });
  log("stopped from the UI: instance STOPPED, step wait STOPPED");
  if (shots) await page.screenshot({ path: join(shots, "ui-stopped.png"), fullPage: true });

  // 5. A loop and a subworkflow open onto their iterations and child: the
  // iteration's page draws the loop's inner steps (from the parent's
  // definition), the child's page its own workflow.
  const childId = `ui-e2e-child-${Date.now()}`;
  const loopId = `ui-e2e-loop-${Date.now()}`;
  const post = (body) =>
    page.evaluate(async (b) => (await fetch("/api/v3/workflows", { method: "POST", headers: { "Content-Type": "application/json" }, body: b })).status, JSON.stringify(body));
  if ((await post({ properties: { owner: "ui-e2e" }, workflow: { id: childId, steps: [{ step: { id: "leaf", type: "NoOp" } }] } })) !== 200) throw new Error(`push ${childId}`);
  const loopDef = {
    properties: { owner: "ui-e2e" },
    workflow: {
      id: loopId,
      steps: [
        {
          foreach: {
            id: "each",
            params: { loop_params: { value: { i: { value: [1, 2], type: "LONG_ARRAY" } }, type: "MAP" } },
            steps: [
              { step: { id: "extract", type: "NoOp", transition: { successors: { load: "true" } } } },
              { step: { id: "load", type: "NoOp" } },
            ],
            transition: { successors: { sub: "true" } },
          },
        },
        { subworkflow: { id: "sub", params: { subworkflow_id: { value: childId, type: "STRING" }, subworkflow_version: { value: "latest", type: "STRING" } } } },
      ],
    },
  };
  if ((await post(loopDef)) !== 200) throw new Error(`push ${loopId}`);
  await page.goto(`${base}/ui/workflows/${loopId}`);
  await page.click("button[data-action=start]");
  await page.waitForURL(/\/instances\/\d+$/);
  await page.waitForSelector("#instance-status [data-status=SUCCEEDED]", { timeout: 60_000 });
  await page.click('#dag svg g.node[data-step-id="each"]');
  // Past the stack's threshold (one iteration in this test), the loop
  // shows its estimate, from its own succeeded iterations.
  await page.waitForFunction(() => (document.querySelector("#foreach-estimate")?.textContent ?? "").startsWith("Estimate: 2 iterations (4 steps)"));
  const est = await page.textContent("#foreach-estimate");
  if (!/: .*\$0\.\d{6} \(p90 \$0\.\d{6}, covers fargate, lambda_steps, orchestration\); from this loop's succeeded iterations/.test(est ?? "")) {
    throw new Error(`the loop's estimate shows ${JSON.stringify(est)}`);
  }
  log(`each: ${est}`);
  await page.click("#step-detail .iterations a >> text=2");
  await page.waitForURL(/maestro_foreach_.*\/instances\/2$/);
  for (const id of ["extract", "load"]) await page.waitForSelector(`#dag svg g.node[data-step-id="${id}"][data-status=SUCCEEDED]`);
  await page.waitForSelector(`#app a[href="/ui/workflows/${loopId}/instances/1"]`); // the parent link
  log(`iteration 2 of each: its DAG (extract -> load) SUCCEEDED`);
  await page.goBack();
  await page.waitForSelector('#dag svg g.node[data-step-id="sub"]');
  await page.click('#dag svg g.node[data-step-id="sub"]');
  await page.click(`#step-detail a >> text=${childId} #1`);
  await page.waitForURL(new RegExp(`/ui/workflows/${childId}/instances/1$`));
  await page.waitForSelector('#dag svg g.node[data-step-id="leaf"][data-status=SUCCEEDED]');
  log(`child ${childId} #1: its DAG SUCCEEDED`);

  // 6. The workflow list shows them.
  await page.goto(`${base}/ui/`);
  await page.waitForSelector(`#workflows tr[data-workflow-id="${sampleId}"]`);
  await page.waitForSelector(`#workflows tr[data-workflow-id="${longId}"]`);
  if (shots) await page.screenshot({ path: join(shots, "ui-workflows.png") });
  if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ ok: true, instance: instanceURL, stopped_workflow: longId }));
} catch (e) {
  failed = true;
  await reportFailure(browser, e, shots && join(shots, "ui-failure.png"));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
