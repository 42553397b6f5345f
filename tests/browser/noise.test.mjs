// The Noise tab in a real browser (issue 20 point 3, the noise seed's viewer):
// the voxel terrain renders, moving the threshold and octaves sliders changes
// the view, the 2D heightmap renders as an image and as a heightfield, a bad
// value shows the server's message and keeps the last view, the server gives
// a clean 400 to a bad request, and the page logs no problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStudio, waitRendered, screenshot, imageDifference, rawPost, report } from './harness.mjs';

const PANE = 'pane-noise';

/** Moves a range input to `value` as a drag does (input events). */
async function setSlider(page, key, value) {
  await page.getByTestId(key).fill(String(value));
}

test('the noise tab renders the terrain and the heightmap and follows its sliders', async () => {
  const studio = await openStudio('noise');
  const { page, problems } = studio;
  try {
    const view = page.locator(`[data-testid="${PANE}"] .view`);
    const stats = page.getByTestId('stats');
    let version = await waitRendered(page, PANE);
    assert.match(await stats.textContent(), /voxels[\s\S]*vertices[\s\S]*noise .*ms · mesh .*ms/);
    await screenshot(page, 'tab-noise');
    const terrain = await screenshot(view, 'noise-terrain');

    // The threshold: fewer voxels are solid, another surface.
    const moved = Date.now();
    await setSlider(page, 'threshold', 0.3);
    version = await waitRendered(page, PANE, version);
    report('noise.threshold_slider_to_render_ms', Date.now() - moved, 'ms');
    assert.match(await stats.textContent(), /threshold 0\.30/);
    const higher = await screenshot(view, 'noise-terrain-threshold');
    const thresholdChange = await imageDifference(page, terrain, higher);
    assert.ok(thresholdChange > 0.01, `the threshold should change the view (${thresholdChange})`);

    // The octaves: one octave is smooth, five are rough.
    await setSlider(page, 'octaves', 1);
    version = await waitRendered(page, PANE, version);
    const smooth = await screenshot(view, 'noise-terrain-octave');
    const octaveChange = await imageDifference(page, higher, smooth);
    assert.ok(octaveChange > 0.01, `the octaves should change the view (${octaveChange})`);

    // 2D: the colour-mapped heightmap, then the same field as a heightfield in 3D.
    await page.getByTestId('dimension').selectOption('2d');
    version = await waitRendered(page, PANE, version);
    assert.match(await stats.textContent(), /samples/);
    const image = await screenshot(view, 'noise-heightmap');
    await page.getByTestId('view2d').selectOption('heightfield');
    version = await waitRendered(page, PANE, version);
    assert.match(await stats.textContent(), /vertices/);
    const heightfield = await screenshot(view, 'noise-heightfield');
    assert.ok((await imageDifference(page, image, heightfield)) > 0.05, 'the heightfield should differ from the image');

    assert.deepEqual(problems, []);

    // A value the server refuses: its message shows, the last view stays
    // (chromium logs the 400 itself as a failed resource, nothing else).
    await page.getByTestId('size').evaluate((s) => {
      s.append(new Option('4096', '4096'));
      s.value = '4096';
      s.dispatchEvent(new Event('change'));
    });
    await page.getByTestId('error').filter({ hasText: "'size'" }).waitFor({ timeout: 30000 });
    assert.equal(Number(await view.getAttribute('data-rendered')), version, 'the last good view stays');
    const kept = await screenshot(view, 'noise-heightfield-kept');
    assert.ok((await imageDifference(page, heightfield, kept)) < 0.01, 'the view is unchanged after the error');
    assert.deepEqual(problems.filter((p) => !/status of 400/.test(p)), []);
  } finally {
    await studio.close();
  }
});

test('bad noise requests get clean 400s naming the field', async () => {
  const studio = await openStudio('noise');
  try {
    const url = studio.server.url;
    const octaves = await rawPost(url + 'api/noise/heightmap', JSON.stringify({ octaves: 99 }));
    assert.equal(octaves.status, 400);
    assert.equal(octaves.json.error.kind, 'request');
    assert.match(octaves.json.error.message, /'octaves'/);
    const size = await rawPost(url + 'api/noise/terrain', JSON.stringify({ size: [512, 512, 512] }));
    assert.equal(size.status, 400);
    assert.match(size.json.error.message, /'size'/);
    const garbage = await rawPost(url + 'api/noise/terrain', '{"threshold": ');
    assert.equal(garbage.status, 400);
    assert.equal(garbage.json.error.kind, 'request');
    assert.equal((await fetch(url + 'api/info')).status, 200);
  } finally {
    await studio.close();
  }
});
