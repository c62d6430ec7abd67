// The UI's access checks in headless Chromium, driven by playwright-core.
// ui/access_test.go runs it against the embedded UI and a fake of the
// API's workflow routes, whose workflows are named after the access they
// answer (wf-reader, wf-operator, wf-owner, wf-open: not enforced, wf-old:
// no access route):
//
//   MAESTRO_UI_URL  the server's base URL (required)
//   CHROMIUM        the browser (default /usr/bin/chromium)
//
// On each workflow's page and its instance 1's page (step a RUNNING, step b
// PAUSED), and its backfill bf-1's page, it checks the role line and which
// buttons (and the backfill's priority picker) are disabled, with the
// tooltip naming the role needed; for a reader it clicks the disabled Stop
// (nothing may be sent), for an operator the enabled Stop (the fake records
// it). Every failed check throws; the exit code is 0 only when all hold.
import { launchChromium } from "./browser.mjs";

const base = process.env.MAESTRO_UI_URL;
if (!base) {
  console.error("MAESTRO_UI_URL must be set");
  process.exit(2);
}
const log = (...a) => console.log(new Date().toISOString(), ...a);
const check = (ok, what) => {
  if (!ok) throw new Error(what);
};

// cases: the workflow, the role line it shows ("" for none), and the role
// each gated action needs when disabled (undefined: enabled).
const operatorActions = { start: "operator", stop: "operator", kill: "operator", "stop step": "operator", "kill step": "operator", skip: "operator", resume: "operator" };
const cases = [
  { wf: "wf-reader", role: "your role: reader", disabled: operatorActions },
  { wf: "wf-operator", role: "your role: operator", disabled: {} },
  { wf: "wf-owner", role: "your role: owner", disabled: {} },
  { wf: "wf-open", role: "your role: reader · access not enforced", disabled: {} },
  { wf: "wf-old", role: "", disabled: {} },
];

const browser = await launchChromium();
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(20_000);
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("dialog", (d) => d.accept());

  // state reads a button's disabled flag and tooltip.
  const state = (sel) =>
    page.$eval(sel, (b) => ({ disabled: b.disabled, title: b.title, needs: b.getAttribute("data-needs") }));
  const expect = async (wf, sel, action, need) => {
    const s = await state(sel);
    if (need) {
      const role = wf.replace(/^wf-/, "");
      check(s.disabled && s.needs === need, `${wf}: ${action} is not disabled for ${need}: ${JSON.stringify(s)}`);
      check(s.title.endsWith(`needs the ${need} role; you hold ${role}`), `${wf}: ${action}'s tooltip is ${JSON.stringify(s.title)}`);
    } else {
      check(!s.disabled && !s.title && s.needs === null, `${wf}: ${action} is not enabled: ${JSON.stringify(s)}`);
    }
  };
  const roleText = async () => (await page.textContent("#access-role")).trim();

  for (const c of cases) {
    // The workflow page: the role line, Start, and the grant's lists.
    await page.goto(`${base}/ui/workflows/${c.wf}`);
    await page.waitForSelector("button[data-action=start]");
    if (c.role) await page.waitForFunction((want) => document.querySelector("#access-role")?.textContent.trim() === want, c.role);
    check((await roleText()) === c.role, `${c.wf}: role line ${JSON.stringify(await roleText())}, want ${JSON.stringify(c.role)}`);
    await expect(c.wf, "button[data-action=start]", "start", c.disabled.start);
    if (c.role) {
      const lists = await page.$$eval("#access dd", (ds) => ds.map((d) => `${d.getAttribute("data-list")}=${d.textContent}`));
      check(JSON.stringify(lists) === JSON.stringify(["owners=team:data", "operators=team:data, team:ml", "readers=nobody"]), `${c.wf}: access card ${lists}`);
    } else {
      check((await page.$("#access")) === null, `${c.wf}: an access card without access`);
    }

    // The instance page: the run's actions and each step's.
    await page.goto(`${base}/ui/workflows/${c.wf}/instances/1`);
    await page.waitForSelector("#instance-actions button[data-action=stop]");
    check((await roleText()) === c.role, `${c.wf} #1: role line ${JSON.stringify(await roleText())}`);
    await expect(c.wf, "#instance-actions button[data-action=stop]", "stop", c.disabled.stop);
    await expect(c.wf, "#instance-actions button[data-action=kill]", "kill", c.disabled.kill);
    await page.click('#dag svg g.node[data-step-id="a"]');
    await page.waitForSelector('#step-detail button[data-action="stop step"]');
    for (const a of ["stop step", "kill step", "skip"]) await expect(c.wf, `#step-detail button[data-action="${a}"]`, a, c.disabled[a]);
    await page.click('#dag svg g.node[data-step-id="b"]');
    await page.waitForSelector("#step-detail button[data-action=resume]");
    await expect(c.wf, "#step-detail button[data-action=resume]", "resume", c.disabled.resume);

    // The backfill page: pause, resume, cancel and the priority need an operator.
    await page.goto(`${base}/ui/workflows/${c.wf}/backfills/bf-1`);
    await page.waitForSelector("#backfill-controls button[data-action=pause]");
    for (const a of ["pause", "resume", "cancel"]) await expect(c.wf, `#backfill-controls button[data-action=${a}]`, a, c.disabled.start);
    await expect(c.wf, "#backfill-priority", "priority", c.disabled.start);
    await page.goto(`${base}/ui/workflows/${c.wf}/instances/1`);
    await page.waitForSelector("#instance-actions button[data-action=stop]");

    if (c.wf === "wf-reader") {
      // A click on a disabled button sends nothing (the Go test checks).
      await page.click("#instance-actions button[data-action=stop]", { force: true });
    }
    if (c.wf === "wf-operator") {
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === "PUT" && r.url().endsWith("/wf-operator/instances/1/actions/stop")),
        page.click("#instance-actions button[data-action=stop]"),
      ]);
    }
    log(`${c.wf}: ${c.role || "no role line"}; disabled: ${Object.keys(c.disabled).join(", ") || "none"}`);
  }
  // The preview page: Push needs the owner role of the workflow a
  // validated definition names; a changed text enables it again.
  const def = (id) => JSON.stringify({ workflow: { id, steps: [{ step: { id: "a", type: "NoOp" } }] } });
  await page.goto(`${base}/ui/definitions/preview`);
  await page.fill("#definition", def("wf-operator"));
  await page.click("button:text-is(\"Validate and draw\")");
  await page.waitForSelector("button[data-action=push][data-needs=owner]");
  await expect("wf-operator", "button[data-action=push]", "push", "owner");
  await page.fill("#definition", def("wf-owner"));
  await expect("wf-owner", "button[data-action=push]", "push", undefined);
  check((await roleText()) === "", `preview: a changed text keeps the role line ${JSON.stringify(await roleText())}`);
  await page.click("button:text-is(\"Validate and draw\")");
  await page.waitForFunction(() => document.querySelector("#access-role")?.textContent.trim() === "your role: owner");
  await expect("wf-owner", "button[data-action=push]", "push", undefined);
  log("preview: Push disabled for an operator's workflow, enabled for an owner's");

  if (errors.length) throw new Error(`errors in the page: ${errors.join("; ")}`);
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  failed = true;
  console.error("FAIL:", e?.message ?? e);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
