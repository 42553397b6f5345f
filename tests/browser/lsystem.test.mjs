// The L-system tab in a real browser (issue 20 points 2 and 7, and the
// "Done when" latency point): load, pick an example, type a model and see the
// module count and the canvas change, a syntax error at the right line with
// the view kept, a slider, and the time from the last keystroke to the
// redrawn view for the Hilbert 3D curve (6 steps, 262k segments) and the 2D
// plant (7 steps, 2.1M segments) — to the first view (the server's preview
// sized to the view) and to the full detail — reported with report(); the
// preview compared with the full frame at the same view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpus, loadavg } from 'node:os';
import { imageComparison, imageDifference, openStudio, report, screenshot, waitRendered } from './harness.mjs';

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

/**
 * Selects `needle` (the first match after `after`) in the editor and focuses
 * it; `skip` leaves out the needle's first characters.
 */
async function selectInEditor(page, needle, after = '', skip = 0) {
  await page.evaluate(([id, n, a, k]) => {
    const { view } = document.querySelector(`[data-testid="${id}"]`).lsystemEditor;
    const doc = view.state.doc.toString();
    const from = doc.indexOf(n, a ? doc.indexOf(a) : 0);
    if (from < 0) throw new Error('not in the editor: ' + n);
    view.focus();
    view.dispatch({ selection: { anchor: from + k, head: from + n.length } });
  }, [PANE, needle, after, skip]);
}

/**
 * Records every drawn model in the page: window.__lsystem.last is the newest
 * 'lsystem-rendered' event's detail, lastKey the newest keydown (both
 * performance.now()). When a keystroke is being measured, the first render
 * of a request sent after it (the preview, or the full frame when there is
 * no preview) is `first`, and the render of that request's full frame also
 * waits for the GPU to finish (a 1-pixel readPixels) and records that as
 * pixelsAt: the view's data-rendered change only says the draw was
 * submitted, SwiftShader draws afterwards.
 */
async function installProbe(page) {
  await page.evaluate((id) => {
    const pane = document.querySelector(`[data-testid="${id}"]`);
    window.__lsystem = { last: null, lastKey: 0, measuring: false, result: null };
    performance.setResourceTimingBufferSize(100000);
    document.addEventListener('keydown', () => {
      const probe = window.__lsystem;
      probe.lastKey = performance.now();
      probe.first = null;  // the first view of a request sent after the last key
      if (probe.measuring && !probe.firstKey) probe.firstKey = probe.lastKey;
    }, true);
    pane.addEventListener('lsystem-rendered', (e) => {
      const probe = window.__lsystem;
      probe.last = e.detail;
      if (!probe.measuring || probe.result || e.detail.requestedAt < probe.lastKey) return;
      probe.first ??= e.detail;
      if (e.detail.header.final === false) return;
      const gl = pane.lsystemViewer.renderer.getContext();
      gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
      probe.result = { ...e.detail, pixelsAt: performance.now(), lastKey: probe.lastKey, first: probe.first };
    });
  }, PANE);
}

/**
 * Runs `action` and waits until a model requested after it, whose header has
 * the fields of `expect` (compared as JSON), is drawn; returns that header.
 * (A render of an earlier edit may still arrive after the action: `expect`
 * tells them apart.)
 */
async function afterRender(page, action, expect = {}, timeout = 30000) {
  const mark = await page.evaluate(() => performance.now());
  await action();
  await page.waitForFunction(([m, fields]) => {
    const last = window.__lsystem.last;
    if (!last || last.requestedAt < m) return false;
    return Object.entries(fields).every(([k, v]) => JSON.stringify(last.header[k]) === JSON.stringify(v));
  }, [mark, expect], { timeout });
  return page.evaluate(() => window.__lsystem.last.header);
}

/**
 * Types `keys` (replacing the selection) and measures, in the page, from the
 * last keystroke's keydown to the drawing of a model requested after it.
 */
async function typeAndMeasure(page, keys) {
  await page.evaluate(() => Object.assign(window.__lsystem, { measuring: true, result: null, first: null, firstKey: 0 }));
  await page.keyboard.type(keys);
  await page.waitForFunction(() => window.__lsystem.result !== null, null, { timeout: 60000 });
  return page.evaluate(() => {
    const r = window.__lsystem.result;
    window.__lsystem.measuring = false;
    // The request's own timing (resource timing; its entry is complete once
    // the reply is): first and last byte of the reply.
    const requests = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/lsystem/stream'));
    const fetched = requests.filter((e) => e.startTime >= r.requestedAt - 1)[0];
    // The requests the edit's keystrokes started, the measured one last (the
    // older ones aborted: Chromium records their entries too).
    const sent = fetched ? requests.filter((e) => e.startTime >= window.__lsystem.firstKey && e.startTime <= fetched.startTime).length : NaN;
    r.firstByteAt = fetched?.responseStart ?? NaN;
    r.lastByteAt = fetched?.responseEnd ?? NaN;
    const first = r.first.requestedAt === r.requestedAt ? r.first : r;  // a preview of the same request
    return {
      firstView: first.renderedAt - r.lastKey, preview: first.header.final === false, previewHeader: first.header.final === false ? first.header : null,
      firstReceived: first.receivedAt - r.requestedAt,
      latency: r.renderedAt - r.lastKey, pixels: r.pixelsAt - r.lastKey, requestToScreen: r.renderedAt - r.requestedAt,
      roundTrip: r.receivedAt - r.requestedAt, header: r.header,
      // Split of the round trip (resource timing): request → first byte
      // (the server's work and the headers), first → last byte (the body
      // into the page), last byte → the frame decoded in the page.
      toFirstByte: r.firstByteAt - r.requestedAt, body: r.lastByteAt - r.firstByteAt, afterBody: r.receivedAt - r.lastByteAt,
      keyToRequest: r.requestedAt - r.lastKey, requests: sent,
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
    await waitRendered(page, PANE, 0);
    await installProbe(page);
    assert.ok(await moduleCount(page) > 0);

    // Pick an example from the list.
    let header = await afterRender(page, () => page.getByTestId('example').selectOption('examples/lsystems/koch-curve.l'), { angle: 90 });
    assert.equal(header.modules, await moduleCount(page));

    // Type a model: the module count is the hand-derived one and the canvas changes.
    const before = await canvasShot(page);
    await setText(page, '');
    await page.locator(`[data-testid="${PANE}"] .cm-content`).click();
    await page.keyboard.type('angle increment: 90\nLsystem: 1\nderivation length: 3\nAxiom: F\nF --> F+F-F-F+F\nendlsystem\n');
    // F → F+F-F-F+F: 5^3 F's and 4·(1+5+25) turns after 3 steps = 249 modules.
    await page.waitForFunction(() => /modules\s+249\b/.test(document.querySelector('[data-testid="stats"]').textContent));
    await page.waitForFunction(() => window.__lsystem.last?.header.modules === 249);
    const typed = await canvasShot(page);
    assert.ok(await imageDifference(page, before, typed) > 0.002, 'the canvas shows the typed model');

    // A syntax error: shown at its line (5), the view kept.
    // One keystroke (a "(" before the successor), so no other model is drawn on the way.
    await selectInEditor(page, 'F --> ', '', 6);
    await page.keyboard.type('(');
    await page.waitForFunction(() => /parse/.test(document.querySelector('[data-testid="error"]').textContent));
    assert.match(await page.getByTestId('error').textContent(), /line 5:/);
    await page.locator(`[data-testid="${PANE}"] .cm-lintRange-error`).first().waitFor();
    const afterError = await canvasShot(page);
    assert.ok(await imageDifference(page, typed, afterError) < 0.002, 'the last good model stays on screen');
    assert.equal(await moduleCount(page), 249);

    // Fix it: the error goes away.
    header = await afterRender(page, () => page.keyboard.press('Backspace'), { modules: 249 });
    await page.waitForFunction(() => document.querySelector('[data-testid="error"]').textContent === '');

    // Move a slider (the angle): the view changes.
    header = await afterRender(page, () => page.getByTestId('angle').fill('60'), { angle: 60, modules: 249 });
    const slid = await canvasShot(page);
    assert.ok(await imageDifference(page, typed, slid) > 0.002, 'the angle slider changes the view');

    // A #define slider for a model with constants.
    header = await afterRender(page, () => setText(page, '#define len 2\nLsystem: 1\nderivation length: 5\nAxiom: A\nA --> F(len)[+(30)A][-(30)A]\nendlsystem\n'), { segments: 31 });
    assert.deepEqual(header.file.defines, [{ name: 'len', value: 2 }]);
    await page.getByTestId('fit').click();
    await page.waitForTimeout(300);  // the fitted view drawn (Fit redraws on the next animation frame)
    const withDefine = await canvasShot(page);
    header = await afterRender(page, () => page.getByTestId('define-len').fill('1.2'), { file: { ...header.file, defines: [{ name: 'len', value: 1.2000000476837158 }] } });
    assert.ok(await imageDifference(page, withDefine, await canvasShot(page)) > 0.002, 'the #define slider changes the view');

    // An oversized derivation: a budget error, the view kept. A → 4000 A's
    // reaches 16 M modules in 2 steps; step 3 (6.4·10^10) is refused before allocating.
    const kept = await canvasShot(page);
    await setText(page, `Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> ${'A'.repeat(4000)}\nendlsystem\n`);
    await page.waitForFunction(() => /budget/.test(document.querySelector('[data-testid="error"]').textContent), null, { timeout: 30000 });
    assert.ok(await imageDifference(page, kept, await canvasShot(page)) < 0.002, 'the last good model stays on screen');

    // Back to an example for the README's screenshot.
    await afterRender(page, () => page.getByTestId('example').selectOption('examples/lsystems/plant-1.24f.l'), { iterations: 5 });
    await page.waitForFunction(() => document.querySelector('[data-testid="error"]').textContent === '');
    await screenshot(page, 'tab-lsystem');
    // A download: the model as GLB, named after the example.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-glb').click()]);
    assert.equal(download.suggestedFilename(), 'plant-1.24f.glb');
    // Chromium logs every 4xx as a console error: the parse and budget errors
    // above are expected 422s; nothing else may show up.
    assert.deepEqual(problems.filter((p) => !/status of 422 \(Unprocessable Entity\)/.test(p)), []);
  } finally {
    await studio.close();
  }
});

/** The machine's load per core, and whether it was quiet enough for a timing verdict. */
function machineLoad() {
  const perCore = loadavg()[0] / cpus().length;
  return { load: round(loadavg()[0]), perCore, quiet: perCore < 0.5 };
}

test('latency: an edit of Hilbert 3D (n=6) and of the 2D plant (n=7) reaches the screen', async () => {
  const studio = await openStudio('lsystem');
  const { page, problems } = studio;
  try {
    await waitRendered(page, PANE, 0);
    await installProbe(page);
    const models = [
      { name: 'hilbert3d', path: 'examples/lsystems/hilbert3d.l', segments: 262143, edits: ['89', '90', '91', '90', '88'] },
      { name: 'plant-2d', path: 'examples/lsystems/plant-2d.l', segments: 2097152, edits: ['25', '20', '22.5', '30', '22.5'] },
      // The same edits without the preview (the full frame only, as before it): side by side, same load.
      { name: 'plant-2d.no_preview', path: 'examples/lsystems/plant-2d.l', segments: 2097152, edits: ['25', '20', '22.5', '30', '22.5'], noPreview: true },
    ];
    const loadBefore = machineLoad();
    const firstViews = {};
    for (const model of models) {
      await page.evaluate(([id, off]) => { document.querySelector(`[data-testid="${id}"]`).lsystemNoPreview = off; }, [PANE, !!model.noPreview]);
      const header = await afterRender(page, () => page.getByTestId('example').selectOption(model.path), { segments: model.segments, final: true }, 60000);
      assert.equal(header.segments, model.segments);
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
        await page.waitForTimeout(300);  // let a stale job and the GPU finish: each edit measured on its own
      }
      const stat = (values) => ({ median: round(median(values)), max: round(Math.max(...values)) });
      const stage = (key) => round(median(samples.map((s) => s.header.timings[key])));
      const keyToFirst = stat(samples.map((s) => s.firstView));
      const keyToRender = stat(samples.map((s) => s.latency));
      const keyToPixels = stat(samples.map((s) => s.pixels));
      firstViews[model.name] = keyToFirst.median;
      report(`lsystem.latency.${model.name}.first_view.median`, keyToFirst.median, 'ms');
      report(`lsystem.latency.${model.name}.first_view.max`, keyToFirst.max, 'ms');
      report(`lsystem.latency.${model.name}.full_detail.median`, keyToRender.median, 'ms');
      report(`lsystem.latency.${model.name}.full_detail.max`, keyToRender.max, 'ms');
      report(`lsystem.latency.${model.name}.pixels.median`, keyToPixels.median, 'ms');
      report(`lsystem.latency.${model.name}.pixels.max`, keyToPixels.max, 'ms');
      const previews = samples.filter((s) => s.preview);
      report(`lsystem.latency.${model.name}.stages`, JSON.stringify({
        parse: stage('parse_ms'), derive: stage('derive_ms'), interpret: stage('interpret_ms'), encode: stage('encode_ms'),
        server: stage('total_ms'), round_trip: round(median(samples.map((s) => s.roundTrip))),
        key_to_request: round(median(samples.map((s) => s.keyToRequest))), requests_per_edit: samples.map((s) => s.requests),
        to_first_byte: round(median(samples.map((s) => s.toFirstByte))), body: round(median(samples.map((s) => s.body))),
        after_body: round(median(samples.map((s) => s.afterBody))),
        request_to_render: round(median(samples.map((s) => s.requestToScreen))),
        previews: previews.length,
        preview_segments: previews.length ? median(previews.map((s) => s.previewHeader.lod.segments)) : null,
        preview_lod_ms: previews.length ? round(median(previews.map((s) => s.previewHeader.timings.lod_ms))) : null,
        // Of lod_ms: the pass over the segments (chains, samples, bounds) and the ordered coverage; then the preview's encoding.
        preview_lod_merge_ms: previews.length ? round(median(previews.map((s) => s.previewHeader.timings.lod_merge_ms))) : null,
        preview_lod_cover_ms: previews.length ? round(median(previews.map((s) => s.previewHeader.timings.lod_cover_ms))) : null,
        preview_encode_ms: previews.length ? round(median(previews.map((s) => s.previewHeader.timings.encode_ms))) : null,
        // Request → the preview decoded in the page, and → drawn (its render submitted).
        preview_to_screen: previews.length ? round(median(previews.map((s) => s.firstView - s.keyToRequest))) : null,
        preview_server_ms: previews.length ? round(median(previews.map((s) => s.previewHeader.timings.total_ms))) : null,
        preview_received: previews.length ? round(median(previews.map((s) => s.firstReceived))) : null,
      }));
    }
    const loadAfter = machineLoad();
    report('lsystem.latency.load', JSON.stringify({ before: loadBefore.load, after: loadAfter.load, cores: cpus().length }));
    // The bound (100 ms from the last keystroke to the view) is a
    // performance target: measured and reported here, like every timing, not
    // asserted (a timed assertion fails or passes with the machine's load and
    // CPU, not with the code). A verdict only counts on a quiet machine (load
    // per core under 0.5 before and after).
    const quiet = loadBefore.quiet && loadAfter.quiet;
    for (const model of models.filter((m) => !m.noPreview)) {
      const ms = firstViews[model.name];
      report(`lsystem.latency.${model.name}.first_view.bound_100ms`, JSON.stringify({ met: ms <= 100, median_ms: ms, quiet }));
    }
    assert.deepEqual(problems, []);
  } finally {
    await studio.close();
  }
});

test("the first view of the 2D plant looks like its full detail", async () => {
  const studio = await openStudio('lsystem');
  const { page, problems } = studio;
  try {
    await waitRendered(page, PANE, 0);
    await installProbe(page);
    await afterRender(page, () => page.getByTestId('example').selectOption('examples/lsystems/plant-2d.l'), { segments: 2097152, final: true }, 60000);
    // The same request twice at the same (fitted) view: the preview kept on
    // screen the first time, the full frame the second. The stats box over
    // the view (its text differs) is hidden for the screenshots.
    await page.evaluate((id) => { document.querySelector(`[data-testid="${id}"] [data-testid="stats"]`).style.visibility = 'hidden'; }, PANE);
    const preview = await afterRender(page, () => page.evaluate((id) => {
      const pane = document.querySelector(`[data-testid="${id}"]`);
      pane.lsystemPreviewOnly = true;
      pane.lsystemUpdate();
    }, PANE), { final: false }, 60000);
    assert.ok(preview.lod.segments < 0.6 * preview.segments, `the preview has ${preview.lod.segments} of ${preview.segments} segments`);
    await page.waitForTimeout(500);  // the full frame arrives and is not drawn
    const previewShot = await screenshot(page.locator(`[data-testid="${PANE}"] .view canvas`), 'lsystem-plant-preview');
    await afterRender(page, () => page.evaluate((id) => {
      const pane = document.querySelector(`[data-testid="${id}"]`);
      pane.lsystemPreviewOnly = false;
      pane.lsystemUpdate();
    }, PANE), { final: true }, 60000);
    await page.waitForTimeout(500);
    const fullShot = await screenshot(page.locator(`[data-testid="${PANE}"] .view canvas`), 'lsystem-plant-full');
    const { psnr, differ } = await imageComparison(page, previewShot, fullShot);
    report('lsystem.preview.plant-2d', JSON.stringify({ segments: preview.lod.segments, of: preview.segments, cell_px: preview.lod.cell, psnr_db: round(psnr), pixels_differing: differ }));
    // The stated tolerance: PSNR ≥ 35 dB and at most 0.5 % of the pixels differing visibly.
    assert.ok(psnr >= 35, `preview vs full detail: PSNR ${psnr} dB < 35 dB`);
    assert.ok(differ <= 0.005, `preview vs full detail: ${differ * 100} % of the pixels differ`);
    assert.deepEqual(problems, []);
  } finally {
    await studio.close();
  }
});
