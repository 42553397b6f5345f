// The L-system tab in a real browser (issue 20 points 2 and 7, and the
// "Done when" latency point): load, pick an example, type a model and see the
// module count and the canvas change, a syntax error at the right line with
// the view kept, a slider, and the time from the last keystroke to the
// redrawn view for the Hilbert 3D curve (6 steps, 262k segments) and the 2D
// plant (7 steps, 2.1M segments), reported with report().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageDifference, openStudio, report, screenshot, waitRendered } from './harness.mjs';

const PANE = 'pane-lsystem';

/** The stats box's module count. */
async function moduleCount(page) {
  const text = await page.getByTestId('stats').textContent();
  const m = /modules\s+([\d,]+)/.exec(text);
  return m ? Number(m[1].replaceAll(',', '')) : NaN;
}

async function canvasShot(page) {
  return page.locator(`[data-testid="${PANE}"] .view canvas`).screenshot();
}

/** Replaces the editor's whole text (one transaction, like a paste). */
async function setText(page, text) {
  await page.evaluate(([id, t]) => document.querySelector(`[data-testid="${id}"]`).lsystemEditor.setText(t), [PANE, text]);
}

/** Selects `needle` (the first match after `after`) in the editor and focuses it. */
async function selectInEditor(page, needle, after = '') {
  await page.evaluate(([id, n, a]) => {
    const { view } = document.querySelector(`[data-testid="${id}"]`).lsystemEditor;
    const doc = view.state.doc.toString();
    const from = doc.indexOf(n, a ? doc.indexOf(a) : 0);
    if (from < 0) throw new Error('not in the editor: ' + n);
    view.focus();
    view.dispatch({ selection: { anchor: from, head: from + n.length } });
  }, [PANE, needle, after]);
}

/**
 * Types `keys` (replacing the selection) and measures, in the page, from the
 * last keystroke's keydown to the 'lsystem-rendered' event of a request sent
 * after it. Returns {latency, header, requestToScreen, roundTrip}.
 */
async function typeAndMeasure(page, keys) {
  await page.evaluate((id) => {
    const pane = document.querySelector(`[data-testid="${id}"]`);
    window.__lsystemProbe = { lastKey: 0, result: null };
    if (!window.__lsystemProbeInstalled) {
      window.__lsystemProbeInstalled = true;
      document.addEventListener('keydown', () => { window.__lsystemProbe.lastKey = performance.now(); }, true);
      pane.addEventListener('lsystem-rendered', (e) => {
        const probe = window.__lsystemProbe;
        if (probe.lastKey && e.detail.requestedAt >= probe.lastKey && !probe.result) probe.result = { ...e.detail, lastKey: probe.lastKey };
      });
    }
  }, PANE);
  await page.keyboard.type(keys);
  await page.waitForFunction(() => window.__lsystemProbe.result !== null, null, { timeout: 30000 });
  return page.evaluate(() => {
    const r = window.__lsystemProbe.result;
    return {
      latency: r.renderedAt - r.lastKey, requestToScreen: r.renderedAt - r.requestedAt,
      roundTrip: r.receivedAt - r.requestedAt, header: r.header,
    };
  });
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const round = (x) => Math.round(x * 10) / 10;

test('the L-system tab edits, shows errors in place, slides and redraws', async () => {
  const studio = await openStudio('lsystem');
  const { page, problems } = studio;
  try {
    // Loads the default example and draws it.
    let version = await waitRendered(page, PANE, 0);
    assert.ok(await moduleCount(page) > 0);

    // Pick an example from the list.
    await page.getByTestId('example').selectOption('examples/lsystems/koch-curve.l');
    version = await waitRendered(page, PANE, version);
    await page.getByTestId('pane-lsystem').getByText('segments').waitFor();

    // Type a model: the module count is the hand-derived one and the canvas changes.
    const before = await canvasShot(page);
    await setText(page, '');
    await page.locator(`[data-testid="${PANE}"] .cm-content`).click();
    await page.keyboard.type('angle increment: 90\nLsystem: 1\nderivation length: 3\nAxiom: F\nF --> F+F-F-F+F\nendlsystem\n');
    await page.waitForFunction(() => /modules\s+249\b/.test(document.querySelector('[data-testid="stats"]').textContent));
    // F → F+F-F-F+F: 5^3 F's and 4·(1+5+25) turns after 3 steps = 249 modules.
    version = await page.evaluate(() => Number(document.querySelector('[data-testid="pane-lsystem"] [data-rendered]').dataset.rendered));
    const typed = await canvasShot(page);
    assert.ok(await imageDifference(page, before, typed) > 0.002, 'the canvas shows the typed model');
    assert.equal(await moduleCount(page), 249);

    // A syntax error: shown at its line, the view kept.
    await selectInEditor(page, 'F+F-F-F+F');
    await page.keyboard.type('F+F-F-F+(');
    const error = page.getByTestId('error');
    await page.waitForFunction(() => /parse/.test(document.querySelector('[data-testid="error"]').textContent));
    assert.match(await error.textContent(), /line 5:/);
    await page.locator(`[data-testid="${PANE}"] .cm-lint-marker-error, [data-testid="${PANE}"] .cm-lintRange-error`).first().waitFor();
    const afterError = await canvasShot(page);
    assert.ok(await imageDifference(page, typed, afterError) < 0.002, 'the last good model stays on screen');
    assert.equal(await moduleCount(page), 249);

    // Fix it: the error goes away.
    await page.keyboard.press('Backspace');
    await page.keyboard.type('F');
    version = await waitRendered(page, PANE, version);
    await page.waitForFunction(() => document.querySelector('[data-testid="error"]').textContent === '');

    // Move a slider (the angle): the view changes.
    const angle = page.getByTestId('angle');
    await angle.fill('60');
    version = await waitRendered(page, PANE, version);
    const slid = await canvasShot(page);
    assert.ok(await imageDifference(page, typed, slid) > 0.002, 'the angle slider changes the view');

    // A #define slider for a model with constants.
    await setText(page, '#define len 2\nLsystem: 1\nderivation length: 5\nAxiom: A\nA --> F(len)[+A][-A]\nendlsystem\n');
    version = await waitRendered(page, PANE, version);
    const defineSlider = page.getByTestId('define-len');
    await defineSlider.waitFor();
    const withDefine = await canvasShot(page);
    await page.getByTestId('fit').click();
    await defineSlider.fill('0.5');
    version = await waitRendered(page, PANE, version);
    assert.ok(await imageDifference(page, withDefine, await canvasShot(page)) > 0.002, 'the #define slider changes the view');

    // An oversized derivation: a budget error, the view kept.
    await selectInEditor(page, '5', 'derivation length');
    await page.keyboard.type('40');
    await page.waitForFunction(() => /budget/.test(document.querySelector('[data-testid="error"]').textContent), null, { timeout: 30000 });

    // Back to an example for the README's screenshot.
    await page.getByTestId('example').selectOption('examples/lsystems/plant-1.24f.l');
    await waitRendered(page, PANE, version);
    await page.waitForFunction(() => document.querySelector('[data-testid="error"]').textContent === '');
    await screenshot(page, 'tab-lsystem');
    assert.deepEqual(problems, []);
  } finally {
    await studio.close();
  }
});

test('latency: an edit of Hilbert 3D (n=6) and of the 2D plant (n=7) reaches the screen', async () => {
  const studio = await openStudio('lsystem');
  const { page, problems } = studio;
  try {
    let version = await waitRendered(page, PANE, 0);
    const models = [
      { name: 'hilbert3d', path: 'examples/lsystems/hilbert3d.l', segments: 262143, edits: ['89', '90', '91', '90', '88', '90'] },
      { name: 'plant-2d', path: 'examples/lsystems/plant-2d.l', segments: 2097152, edits: ['25', '20', '22.5', '30', '24', '22.5'] },
    ];
    for (const model of models) {
      await page.getByTestId('example').selectOption(model.path);
      version = await waitRendered(page, PANE, version, 60000);
      await page.waitForFunction((n) => new RegExp(`segments\\s+${n.toLocaleString('en-US')}\\b`).test(document.querySelector('[data-testid="stats"]').textContent), model.segments, { timeout: 60000 });
      const samples = [];
      for (const edit of model.edits) {
        const current = await page.evaluate((id) => {
          const doc = document.querySelector(`[data-testid="${id}"]`).lsystemEditor.getText();
          return /angle increment:\s*([\d.]+)/.exec(doc)[1];
        }, PANE);
        await selectInEditor(page, current, 'angle increment:');
        const m = await typeAndMeasure(page, edit);
        assert.equal(m.header.segments, model.segments);
        samples.push(m);
        await page.waitForTimeout(150);  // let a stale job finish: each edit measured on its own
      }
      const latencies = samples.map((s) => s.latency);
      const stage = (key) => round(median(samples.map((s) => s.header.timings[key])));
      report(`lsystem.latency.${model.name}.median`, round(median(latencies)), 'ms');
      report(`lsystem.latency.${model.name}.max`, round(Math.max(...latencies)), 'ms');
      report(`lsystem.latency.${model.name}.stages`, JSON.stringify({
        parse: stage('parse_ms'), derive: stage('derive_ms'), interpret: stage('interpret_ms'), encode: stage('encode_ms'),
        server: stage('total_ms'), round_trip: round(median(samples.map((s) => s.roundTrip))),
        request_to_screen: round(median(samples.map((s) => s.requestToScreen))),
      }));
    }
    assert.deepEqual(problems, []);
  } finally {
    await studio.close();
  }
});
