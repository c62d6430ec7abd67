// The backfill page in headless Chromium, driven by playwright-core.
// test/backfill_ui_test.go runs it against a local stack where a backfill
// of four firings at concurrency 2 has two runs succeeded and two napping:
//
//   MAESTRO_UI_URL             the stack's base URL (required)
//   MAESTRO_BACKFILL_WORKFLOW  the workflow (required)
//   MAESTRO_BACKFILL_ID        the backfill (required)
//   MAESTRO_BACKFILL_RUNS      its runs, "firing=instance=status" joined by
//                              commas, in firing order (required)
//   MAESTRO_SCREENSHOTS        a directory for a screenshot (optional)
//   CHROMIUM                   the browser (default /usr/bin/chromium)
//
// From the workflow page's backfills table it opens the backfill page and
// checks the counts, one timeline bar per run in firing order with its
// status's colour and a link to its instance (followed for one), then
// pauses and resumes the backfill and sets its priority to low, checking
// the status the page shows after each, and last cancels it: CANCELLED,
// and its napping runs turn STOPPED on the timeline. Every failed check throws; the
// exit code is 0 only when all hold.
import { launchChromium, reportFailure } from "./browser.mjs";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const base = process.env.MAESTRO_UI_URL;
const wf = process.env.MAESTRO_BACKFILL_WORKFLOW;
const bid = process.env.MAESTRO_BACKFILL_ID;
const runsEnv = process.env.MAESTRO_BACKFILL_RUNS;
if (!base || !wf || !bid || !runsEnv) {
  console.error("MAESTRO_UI_URL, MAESTRO_BACKFILL_WORKFLOW, MAESTRO_BACKFILL_ID and MAESTRO_BACKFILL_RUNS must be set");
  process.exit(2);
}
const runs = runsEnv.split(",").map((r) => {
  const [firing, instance, status] = r.split("=");
  return { firing, instance, status };
});
const shots = process.env.MAESTRO_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });
const log = (...a) => console.log(new Date().toISOString(), ...a);
const check = (ok, what) => {
  if (!ok) throw new Error(what);
};
const tones = { SUCCEEDED: "tone-ok", IN_PROGRESS: "tone-run" };

const browser = await launchChromium();
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(30_000);
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(`${m.text()} (${m.location().url})`));

  // 1. The workflow page lists the backfill and links to its page.
  await page.goto(`${base}/ui/workflows/${wf}`);
  const row = `#backfills tr[data-backfill-id="${bid}"]`;
  await page.waitForSelector(row);
  const rowText = await page.textContent(row);
  check(rowText.includes("RUNNING") && rowText.includes("SUCCEEDED 2") && rowText.includes("4 (2026-01-01T00:00:00Z to 2026-01-01T04:00:00Z)"), `backfills row: ${rowText}`);
  await page.click(`${row} a`);
  await page.waitForURL(`**/ui/workflows/${wf}/backfills/${bid}`);
  log(`workflow page row: ${rowText}`);

  // 2. The progress: counts by status, running, pending, next firing, ETA.
  await page.waitForSelector("#backfill-timeline rect.bar");
  const fact = async (name) => (await page.textContent(`#backfill-progress dd[data-fact="${name}"]`)).trim();
  const facts = { total: await fact("total"), admitted: await fact("admitted"), running: await fact("running"), pending: await fact("pending"), SUCCEEDED: await fact("SUCCEEDED"), next: await fact("next firing") };
  check(JSON.stringify(facts) === JSON.stringify({ total: "4", admitted: "4", running: "2", pending: "0", SUCCEEDED: "2", next: "—" }), `progress ${JSON.stringify(facts)}`);
  check((await page.textContent("#backfill-status [data-status]")) === "RUNNING", "the status shown is not RUNNING");
  log(`progress: ${JSON.stringify(facts)}`);

  // 3. The timeline: one bar per run, in firing order, its status's colour, linking to its instance.
  const bars = await page.$$eval("#backfill-timeline a.run", (as) =>
    as.map((a) => {
      const r = a.querySelector("rect.bar");
      return { href: a.getAttribute("href"), instance: r.getAttribute("data-instance-id"), status: r.getAttribute("data-status"), firing: r.getAttribute("data-firing"), cls: r.getAttribute("class"), width: Number(r.getAttribute("width")) };
    }),
  );
  check(bars.length === runs.length, `${bars.length} bars, want ${runs.length}`);
  bars.forEach((b, i) => {
    const want = runs[i];
    check(b.instance === want.instance && b.firing === want.firing && b.status === want.status, `bar ${i}: ${JSON.stringify(b)}, want ${JSON.stringify(want)}`);
    check(b.cls.includes(tones[want.status]), `bar ${i} of ${want.status}: class ${b.cls}`);
    check(b.href === `/ui/workflows/${wf}/instances/${want.instance}`, `bar ${i}: href ${b.href}`);
    check(b.width >= 2, `bar ${i}: width ${b.width}`);
  });
  check((await page.textContent("#backfill-runs-note")).startsWith("4 runs started by this backfill, of 4 admitted firings"), `note ${await page.textContent("#backfill-runs-note")}`);
  if (shots) await page.screenshot({ path: join(shots, "ui-backfill.png"), fullPage: true });
  log(`timeline: ${bars.map((b) => `${b.firing} #${b.instance} ${b.status}`).join("; ")}`);

  // 4. A bar opens its instance.
  await page.click(`#backfill-timeline a.run rect[data-instance-id="${runs[0].instance}"]`);
  await page.waitForURL(`**/ui/workflows/${wf}/instances/${runs[0].instance}`);
  await page.goBack();
  await page.waitForSelector("#backfill-controls button[data-action=pause]");

  // 5. Pause, then resume: the status shown follows; then the priority.
  const statusIs = (st) => page.waitForSelector(`#backfill-status [data-status="${st}"]`);
  await page.click("#backfill-controls button[data-action=pause]");
  await statusIs("PAUSED");
  await page.reload();
  await statusIs("PAUSED");
  await page.click("#backfill-controls button[data-action=resume]");
  await statusIs("RUNNING");
  await page.selectOption("#backfill-priority", "low");
  await page.waitForFunction(() => document.querySelector("#backfill-status")?.textContent?.includes("priority low"));
  log("pause -> PAUSED (also after a reload), resume -> RUNNING, priority -> low");

  // 6. Cancel (confirmed): CANCELLED, and its napping runs end STOPPED on the timeline.
  page.once("dialog", (d) => d.accept());
  await page.click("#backfill-controls button[data-action=cancel]");
  await statusIs("CANCELLED");
  const napping = runs.filter((r) => r.status === "IN_PROGRESS").map((r) => r.instance);
  await page.waitForFunction(
    (ids) => ids.every((id) => document.querySelector(`#backfill-timeline rect.bar[data-instance-id="${id}"]`)?.getAttribute("data-status") === "STOPPED"),
    napping,
    { timeout: 60_000 },
  );
  for (const id of napping) {
    const cls = await page.getAttribute(`#backfill-timeline rect.bar[data-instance-id="${id}"]`, "class");
    check(cls.includes("tone-stop"), `stopped run #${id}: class ${cls}`);
  }
  log(`cancel -> CANCELLED; runs ${napping.join(", ")} STOPPED on the timeline`);

  if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  failed = true;
  await reportFailure(browser, e, shots && join(shots, "ui-backfill-failure.png"));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
