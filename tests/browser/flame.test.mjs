// The Flame tab in a real browser: an example loads and renders
// progressively (several frames, pass 1 .. passes, each a different image),
// moving the gamma and an xform weight slider edits the genome's XML and
// changes the image, a broken genome shows its error at line:col and keeps
// the last image, and the page reports no problems.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { imageDifference, openStudio, report, screenshot, waitRendered } from './harness.mjs';

/** Records every frame the canvas shows (pass, final flag, pixels) from now on. */
async function recordFrames(page) {
  await page.evaluate(() => {
    window.flameFrames = [];
    const canvas = document.querySelector('[data-testid="flame-canvas"]');
    window.flameObserver?.disconnect();
    window.flameObserver = new MutationObserver(() => {
      window.flameFrames.push({ pass: Number(canvas.dataset.pass), final: canvas.dataset.final === 'true', at: performance.now(), png: canvas.toDataURL('image/png') });
    });
    window.flameObserver.observe(canvas, { attributes: true, attributeFilter: ['data-rendered'] });
  });
}

/** Waits for the final frame of the render in flight; returns the frames recorded. */
async function finalFrames(page) {
  await page.waitForFunction(() => window.flameFrames.some((f) => f.final), null, { timeout: 30000 });
  return page.evaluate(() => window.flameFrames.map(({ pass, final, at, png }) => ({ pass, final, at, png })));
}

const pngOf = (dataUrl) => Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');

test('flame tab: progressive render, sliders edit the genome, errors keep the image', async () => {
  const studio = await openStudio('flame');
  const { page, problems } = studio;
  try {
    const pane = page.getByTestId('pane-flame');
    const canvas = page.getByTestId('flame-canvas');
    await waitRendered(page, 'pane-flame', 0);
    await page.waitForFunction(() => document.querySelector('[data-testid="flame-canvas"]').dataset.final === 'true', null, { timeout: 30000 });

    // Pick an example: the image refines over several frames.
    await recordFrames(page);
    const picked = await page.evaluate(() => performance.now());
    await pane.getByTestId('example').selectOption({ label: 'linear' });
    const frames = await finalFrames(page);
    assert.ok(frames.length >= 3, `expected several frames, got ${frames.length}`);
    assert.deepEqual(frames.map((f) => f.pass), frames.map((_, i) => i + 1), 'passes arrive in order, none skipped');
    assert.equal(frames.at(-1).final, true);
    const refined = await imageDifference(page, pngOf(frames[0].png), pngOf(frames.at(-1).png));
    assert.ok(refined > 0.02, `the last pass should differ from the first (differ ${refined})`);
    report('flame first frame after picking an example', Math.round(frames[0].at - picked), 'ms');
    report('flame last frame after picking an example', Math.round(frames.at(-1).at - picked), 'ms');
    report('flame frames per render', frames.length);
    const stats = await pane.getByTestId('stats').textContent();
    assert.match(stats, new RegExp(`pass ${frames.length}/${frames.length}`));
    assert.match(stats, /samples/);

    // Move the gamma slider: the genome's text changes and so does the image.
    const before = await screenshot(canvas, 'flame-before-gamma');
    await recordFrames(page);
    const moved = await page.evaluate(() => performance.now());
    await pane.getByTestId('gamma').fill('1.5');
    const gammaFrames = await finalFrames(page);
    report('flame first frame after a gamma change', Math.round(gammaFrames[0].at - moved), 'ms');
    assert.match(await pane.getByTestId('editor').textContent(), /gamma="1\.5"/);
    const after = await screenshot(canvas, 'flame-after-gamma');
    const gammaChange = await imageDifference(page, before, after);
    assert.ok(gammaChange > 0.05, `gamma 1.5 should change the image (differ ${gammaChange})`);

    // An xform's weight: the first <xform weight="…"> becomes 0.05.
    await recordFrames(page);
    await pane.getByTestId('xform-0-weight').fill('0.05');
    await finalFrames(page);
    assert.match(await pane.getByTestId('editor').textContent(), /<xform weight="0\.05"/);
    const weighted = await screenshot(canvas, 'flame-after-weight');
    const weightChange = await imageDifference(page, after, weighted);
    assert.ok(weightChange > 0.02, `a weight change should change the image (differ ${weightChange})`);
    await screenshot(page, 'tab-flame');

    // Save genome: the example's text with exactly the two slider edits.
    const original = readFileSync(join(process.env.PROCGEN_SOURCE_DIR, 'examples/flames/linear.flam3'), 'utf8');
    const expected = original.replace('gamma="4"', 'gamma="1.5"').replace('<xform weight="0.25"', '<xform weight="0.05"');
    const [genomeDownload] = await Promise.all([page.waitForEvent('download'), pane.getByTestId('save-genome').click()]);
    assert.equal(readFileSync(await genomeDownload.path(), 'utf8'), expected, 'the saved genome is the example with the slider edits only');
    assert.match(genomeDownload.suggestedFilename(), /\.flam3$/);
    // Save PNG: the last image, 640 wide (the default width) as the PNG header says.
    const [pngDownload] = await Promise.all([page.waitForEvent('download'), pane.getByTestId('save-png').click()]);
    const png = readFileSync(await pngDownload.path());
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.equal(png.readUInt32BE(16), 640);
    assert.equal(png.readUInt32BE(20), 360);

    // The second flame of the file: its own sliders (5 xforms) and image.
    await recordFrames(page);
    await pane.getByTestId('flame-index').selectOption('1');
    await finalFrames(page);
    await pane.getByTestId('xform-4-weight').waitFor();
    const second = await screenshot(canvas, 'flame-second');
    assert.ok((await imageDifference(page, weighted, second)) > 0.05, 'flame 1 is another image');

    // A broken genome: the error at line 3, column of the unknown variation; the image stays.
    const rendered = Number(await canvas.getAttribute('data-rendered'));
    const broken = [
      '<flames>',
      '<flame size="64 64" quality="1">',
      '  <xform weight="1" color="0" linear="1" nosuchvariation="1" coefs="1 0 0 1 0 0"/>',
      '  <color index="0" rgb="255 255 255"/>',
      '</flame>',
      '</flames>',
    ].join('\n');
    await pane.locator('.cm-content').click();
    await page.keyboard.press('Control+a');
    await page.keyboard.insertText(broken);
    const error = pane.getByTestId('error');
    await error.filter({ hasText: 'nosuchvariation' }).waitFor({ timeout: 10000 });
    assert.match(await error.textContent(), /^3:42: /);
    await pane.locator('.cm-lintRange-error').first().waitFor();
    assert.equal(Number(await canvas.getAttribute('data-rendered')), rendered, 'no new image for a broken genome');
    const kept = await screenshot(canvas, 'flame-broken-genome');
    assert.ok((await imageDifference(page, second, kept)) < 0.001, 'the last good image stays on screen');

    // Chromium logs the broken genome's 422 reply as a failed resource load:
    // that one is the error this test asked for; anything else is a problem.
    assert.deepEqual(problems.filter((p) => !/status of 422/.test(p)), []);
    assert.ok(problems.length <= 1, problems.join('\n'));
  } finally {
    await studio.close();
  }
});
