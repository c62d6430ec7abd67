// The version diff page in headless Chromium, driven by playwright-core.
// test/diff_test.go runs it against a local stack where it pushed two
// versions of one workflow:
//
//   MAESTRO_UI_URL         the stack's base URL (required)
//   MAESTRO_DIFF_WORKFLOW  the workflow (required); version 2 changes
//                          version 1 so: step cleanup and edge
//                          extract -> cleanup removed, step notify and edge
//                          load -> notify added, wait's sleep_seconds and
//                          extract's and load's transitions changed, the
//                          body of the foreach each changed (its step inner
//                          renamed), step audit the same
//   MAESTRO_SCREENSHOTS    a directory for a screenshot (optional)
//   CHROMIUM               the browser (default /usr/bin/chromium)
//
// From the workflow page it follows "compare with previous" to the diff
// page and checks each side's highlights — the class, the data-diff mark
// and the colour the page draws — and the list of changes with their
// JSON paths; then a diff with a version that does not exist shows the
// API's 404, and one with a selector that is not one the API's 400. Every failed check throws; the exit code is 0 only when all
// hold.
import { launchChromium, reportFailure } from "./browser.mjs";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const base = process.env.MAESTRO_UI_URL;
const wf = process.env.MAESTRO_DIFF_WORKFLOW;
if (!base || !wf) {
  console.error("MAESTRO_UI_URL and MAESTRO_DIFF_WORKFLOW must be set");
  process.exit(2);
}
const shots = process.env.MAESTRO_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });
const log = (...a) => console.log(new Date().toISOString(), ...a);
const check = (ok, what) => {
  if (!ok) throw new Error(what);
};

const browser = await launchChromium();
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
  page.setDefaultTimeout(30_000);
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // The missing version's 404 and the bad selector's 400 below are
  // expected; Chromium logs them.
  const expected = (m) =>
    (m.text().includes("status of 404") && /\/versions\/1\/diff\/9$/.test(m.location().url)) ||
    (m.text().includes("status of 400") && /\/versions\/first\/diff\/2$/.test(m.location().url));
  page.on("console", (m) => m.type() === "error" && !expected(m) && errors.push(`${m.text()} (${m.location().url})`));

  // 1. The workflow page links its version to the previous one.
  await page.goto(`${base}/ui/workflows/${wf}`);
  await page.click("a:text-is('compare with previous')");
  await page.waitForURL(`**/ui/workflows/${wf}/diff/1/2`);
  await page.waitForSelector("#diff-to svg g.node[data-step-id=notify]");
  check((await page.textContent("#diff-title")).includes("version 1 → version 2"), `title ${await page.textContent("#diff-title")}`);

  // 2. The highlights: each side's marked nodes and edges, exactly.
  const marks = (side) =>
    page.$$eval(`#${side} svg [data-diff]`, (els) =>
      els
        .map((e) => `${e.getAttribute("data-step-id") ?? `${e.getAttribute("data-from")}->${e.getAttribute("data-to")}`}=${e.getAttribute("data-diff")}`)
        .sort()
        .join(" "),
    );
  const left = await marks("diff-from");
  const right = await marks("diff-to");
  check(left === "cleanup=removed each=changed extract->cleanup=removed extract=changed load=changed wait=changed", `left highlights: ${left}`);
  check(right === "each=changed extract=changed load->notify=added load=changed notify=added wait=changed", `right highlights: ${right}`);
  log(`left: ${left}; right: ${right}`);

  // The colours drawn: green added, red removed, amber changed; unmarked
  // nodes keep the plain stroke.
  const stroke = (sel) => page.$eval(sel, (e) => getComputedStyle(e).stroke);
  const green = "rgb(31, 157, 85)", red = "rgb(210, 60, 60)", amber = "rgb(183, 121, 31)";
  check((await stroke("#diff-to g.node[data-step-id=notify] .box")) === green, `notify's stroke ${await stroke("#diff-to g.node[data-step-id=notify] .box")}`);
  check((await stroke("#diff-from g.node[data-step-id=cleanup] .box")) === red, "cleanup is not red");
  check((await stroke("#diff-from g.node[data-step-id=wait] .box")) === amber, "wait is not amber on the left");
  check((await stroke("#diff-to g.node[data-step-id=wait] .box")) === amber, "wait is not amber on the right");
  check((await stroke('#diff-to path.edge[data-from=load][data-to=notify]')) === green, "the edge load -> notify is not green");
  check((await stroke('#diff-from path.edge[data-from=extract][data-to=cleanup]')) === red, "the edge extract -> cleanup is not red");
  for (const side of ["diff-from", "diff-to"]) {
    const plain = await stroke(`#${side} g.node[data-step-id=audit] .box`);
    check(![green, red, amber].includes(plain), `audit, unchanged, is drawn ${plain} in ${side}`);
  }
  check((await page.$("#diff-to g.node[data-step-id=cleanup]")) === null && (await page.$("#diff-from g.node[data-step-id=notify]")) === null, "a side draws a step of the other version");

  // 3. The list of changes, with JSON paths.
  const items = await page.$$eval("#diff-changes li", (ls) => ls.map((l) => `${l.getAttribute("data-kind")}|${l.textContent}`));
  const want = [
    "added|step notify (NoOp) added at workflow.steps[4].step",
    "removed|step cleanup (NoOp) removed from workflow.steps[4].step",
    'changed|step extract: transition.successors.cleanup "true" → (none)',
    'changed|step inner: name (none) → "Inner"',
    'changed|step load: transition (none) → {"successors":{"notify":"true"}}',
    "changed|step wait: params.sleep_seconds.value 1 → 2",
    "added|edge load → notify added",
    "removed|edge extract → cleanup removed",
  ];
  check(JSON.stringify(items) === JSON.stringify(want), `changes:\n${items.join("\n")}\nwant\n${want.join("\n")}`);
  const waitPath = await page.getAttribute('#diff-changes li[data-step-id=wait][data-kind=changed]', "data-path");
  check(waitPath === "workflow.steps[1].step.params.sleep_seconds.value", `wait's change path ${waitPath}`);
  check((await page.textContent("#diff-summary")) === "1 added, 1 removed, 4 changed steps; 1 added, 1 removed, 0 changed edges", `summary ${await page.textContent("#diff-summary")}`);
  if (shots) await page.screenshot({ path: join(shots, "ui-diff.png"), fullPage: true });
  log(`${items.length} changes listed`);

  // 4. The pickers: version 2 against itself, then back to 1 -> 2.
  check(JSON.stringify(await page.$$eval("#diff-to-version option", (os) => os.map((o) => o.value))) === '["2","1"]', "the pickers do not offer versions 2 and 1");
  await page.selectOption("#diff-from-version", "2");
  await page.waitForURL(`**/ui/workflows/${wf}/diff/2/2`);
  await page.waitForSelector("#diff-changes li.empty");
  check((await page.$$("#diff-from svg [data-diff], #diff-to svg [data-diff]")).length === 0, "version 2 against itself highlights something");
  await page.goBack();
  await page.waitForSelector("#diff-to svg g.node[data-step-id=notify][data-diff=added]");
  log("pickers: 2 -> 2 has no changes; back to 1 -> 2");

  // 5. A version that does not exist: the API's 404, named.
  await page.goto(`${base}/ui/workflows/${wf}/diff/1/9`);
  await page.waitForSelector("div.error[role=alert]");
  const msg = await page.textContent("div.error[role=alert]");
  check(msg.includes("404") && msg.includes("no version 9"), `missing version: ${msg}`);
  log(`missing version: ${msg}`);

  // 6. A selector that is not one: the API's 400, naming the parameter.
  await page.goto(`${base}/ui/workflows/${wf}/diff/first/2`);
  await page.waitForSelector("div.error[role=alert] li");
  const bad = await page.textContent("div.error[role=alert]");
  check(bad.includes("400") && bad.includes("version: must be active, latest, default or a positive version number"), `bad selector: ${bad}`);
  log(`bad selector: ${bad}`);

  if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  failed = true;
  await reportFailure(browser, e, shots && join(shots, "ui-diff-failure.png"));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
