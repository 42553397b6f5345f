// The L-system tab (issue 20 point 2): edit a .l model and see it at once.
// Every edit posts the text (and the sliders' overrides) to
// /api/lsystem/stream through a Channel — a newer edit aborts the request
// in flight and the server cancels its derivation and interpretation — with
// the view (viewport and camera): the reply is a preview sized to that view
// (a big model's segments merged on a sub-pixel grid, docs/studio.md), then
// the full geometry, which replaces it. The u16 positions and u8 colours go
// to the GPU as they arrive (no copies, no JSON for the big data). Parse
// errors show at line:col in the editor and in the error panel; the last
// good model stays on screen.
//
// Test hooks: the pane dispatches a 'lsystem-rendered' event after each new
// model is drawn ({version, requestedAt, receivedAt, renderedAt, header};
// header.final is false for a preview; performance.now() times), holds the
// editor and the viewer as pane.lsystemEditor and pane.lsystemViewer, and
// with pane.lsystemPreviewOnly = true keeps a preview on screen (the full
// frame that follows it is not drawn), with pane.lsystemNoPreview = true asks
// for the full frame only, with pane.lsystemPreviewCell = c asks for a
// preview on a grid of c pixels (default PREVIEW_CELL), and
// pane.lsystemUpdate() resends.
import { Channel, getJson, getText, isSuperseded } from '../api.js';
import { createEditor } from '../editor.js';
import { button, el, errorBox as makeErrorBox, executionControls, formatCount, formatMs, select, setOptions, slider, tabLayout } from '../ui.js';
import { THREE, Viewer, lineSegments, triangleMesh } from '../viewer.js';

const DEFAULT_EXAMPLE = 'examples/lsystems/plant-1.24b.l';
/** The preview's grid cell in pixels (docs/studio.md): what the server merges and covers at. */
const PREVIEW_CELL = 0.5;

/** A slider range for a #define constant around its value in the file. */
function defineRange(value) {
  if (value === 0) return { min: -1, max: 1, step: 0.01 };
  const span = Math.abs(value) * 2;
  const lo = value > 0 ? 0 : -span, hi = value > 0 ? span : 0;
  const step = Math.pow(10, Math.floor(Math.log10(span)) - 2);
  return { min: lo, max: hi, step };
}

/**
 * lineSegments (viewer.js) for a model flat in z, whose positions hold x, y
 * only (u16 normalized into the bounds): WebGL reads the missing z as 0. The
 * bounding box is given, as three.js would read z from the next vertex.
 */
function flatLineSegments({ positions, colors, bounds, color }) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(positions, 2, true));
  if (colors) geometry.setAttribute('color', new THREE.BufferAttribute(colors, 3, true));
  geometry.boundingBox = new THREE.Box3(new THREE.Vector3(0, 0, 0), new THREE.Vector3(1, 1, 0));
  geometry.boundingSphere = new THREE.Sphere(new THREE.Vector3(0.5, 0.5, 0), Math.SQRT1_2);
  const material = new THREE.LineBasicMaterial({ color: colors ? 0xffffff : color, vertexColors: !!colors });
  const lines = new THREE.LineSegments(geometry, material);
  const [x0, y0, z0, x1, y1] = bounds;
  lines.scale.set(Math.max(x1 - x0, 1e-30), Math.max(y1 - y0, 1e-30), 1);
  lines.position.set(x0, y0, z0);
  return lines;
}

export default {
  id: 'lsystem',
  title: 'L-system',
  create(pane, { info }) {
    const { controls, view, stats } = tabLayout(pane, 'lsystem');

    // --- view and stats
    const viewer = new Viewer(view);
    view.append(stats);

    // --- examples
    const examples = select(controls, { key: 'example', label: 'Example', options: [], onChange: (path) => loadExample(path) });

    // --- editor and errors
    const editorBox = el('div', { className: 'editor' });
    controls.append(editorBox);
    const errorBox = makeErrorBox();
    controls.append(errorBox);
    const editor = createEditor(editorBox, { language: 'lsystem', onChange: () => schedule() });
    pane.lsystemEditor = editor;
    pane.lsystemViewer = viewer;

    // --- derivation controls: each slider overrides the file once moved
    const overrides = {};
    const derivation = el('fieldset', {}, el('legend', { textContent: 'Derivation' }));
    controls.append(derivation);
    const iterations = slider(derivation, {
      key: 'iterations', label: 'Derivation length', min: 0, max: 12, value: 0,
      onInput: (v) => { overrides.iterations = v; schedule(); },
    });
    const angle = slider(derivation, {
      key: 'angle', label: 'Angle', min: 0, max: 180, step: 0.5, value: 90, format: (v) => v + '°',
      onInput: (v) => { overrides.angle = v; schedule(); },
    });
    const seed = slider(derivation, {
      key: 'seed', label: 'Seed', min: 0, max: 1000, value: 1,
      onInput: (v) => { overrides.seed = v; schedule(); },
    });
    const definesBox = el('fieldset', {}, el('legend', { textContent: '#define' }));
    definesBox.style.display = 'none';
    controls.append(definesBox);
    let defineSliders = new Map();  // name → slider
    let defineOverrides = {};

    const execution = el('fieldset', {}, el('legend', { textContent: 'Execution' }));
    controls.append(execution);
    const executionParams = executionControls(execution, info, () => schedule());

    const actions = el('div', { className: 'row lsystem-actions' });
    controls.append(actions);
    button(actions, { key: 'fit', text: 'Fit', onClick: () => { viewer.fit(); if (lastHeader) fittedSize = diagonal(lastHeader.bounds); } });
    const exportChannel = new Channel('/api/lsystem/export');
    for (const format of ['glb', 'obj', 'png']) {
      button(actions, {
        key: `download-${format}`, text: format.toUpperCase(),
        onClick: () => exportChannel.download({ ...params(), format, name: modelName }, `lsystem.${format}`)
          .catch((error) => { if (!isSuperseded(error)) showError(error); }),
      });
    }

    // --- requests
    const channel = new Channel('/api/lsystem/stream');
    let modelName = 'lsystem';
    let fitNext = true;
    let scheduled = false;
    let lastHeader = null;

    function params() {
      const p = { text: editor.getText(), ...executionParams() };
      if (overrides.iterations !== undefined) p.iterations = overrides.iterations;
      if (overrides.angle !== undefined) p.angle = overrides.angle;
      if (overrides.seed !== undefined) p.seed = overrides.seed;
      // Only the constants the text still defines (an override of a removed #define is a 400).
      const defined = new Set([...p.text.matchAll(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)/gm)].map((m) => m[1]));
      const kept = Object.entries(defineOverrides).filter(([name]) => defined.has(name));
      if (kept.length) p.defines = Object.fromEntries(kept);
      return p;
    }

    /**
     * Runs the newest edit at once: in a microtask, so the changes of one
     * event make one request (the Channel cancels a stale one anyway). Not
     * a timer: after a keystroke Chromium runs timers only after the next
     * frame, which put 10–20 ms between the key and the request.
     */
    function schedule() {
      if (scheduled) return;
      scheduled = true;
      queueMicrotask(() => {
        scheduled = false;
        update();
      });
    }

    async function update() {
      const requestedAt = performance.now();
      // The current view sizes the preview; not when the reply will refit the camera.
      const request = fitNext || pane.lsystemNoPreview ? params() : { ...params(), view: { ...viewer.viewState(), cell: pane.lsystemPreviewCell ?? PREVIEW_CELL } };
      let previewShown = false;
      try {
        await channel.stream(request, (frame) => {
          if (frame.header.final === false) previewShown = true;
          else if (previewShown && pane.lsystemPreviewOnly) return undefined;
          showError(null);
          // Drawn before this returns (Viewer.setContent): the full frame's
          // bytes (tens of MB) are taken in on the page's thread only after the
          // preview's draw is submitted, so they do not hold up the first view.
          show(frame, requestedAt, performance.now());
          return undefined;
        });
      } catch (error) {
        if (!isSuperseded(error)) showError(error);
      }
    }
    pane.lsystemUpdate = update;

    function show({ header, buffers }, requestedAt, receivedAt) {
      const objects = [];
      if (header.segments > 0) {
        const options = {
          positions: buffers.segment_positions, colors: buffers.segment_colors, bounds: header.bounds,
          color: header.segment_color ? rgb(header.segment_color) : undefined,
        };
        objects.push(header.segment_position_components === 2 ? flatLineSegments(options) : lineSegments(options));
      }
      if (header.polygon_triangles > 0) {
        objects.push(triangleMesh({
          positions: buffers.polygon_positions, indices: buffers.polygon_indices, colors: buffers.polygon_colors, bounds: header.bounds,
        }));
      }
      // Keep the camera through small edits; refit when the model's size changed a lot.
      const size = diagonal(header.bounds);
      const refit = fitNext || !(size > fittedSize / 3 && size < fittedSize * 3);
      if (refit) fittedSize = size;
      fitNext = false;
      lastHeader = header;
      syncControls(header);
      showStats(header, receivedAt - requestedAt, null);
      pendingRender = { requestedAt, receivedAt, header };
      viewer.setContent(objects, { fit: refit });  // draws it, then onRendered below
    }

    const rgb = ([r, g, b]) => (r << 16) | (g << 8) | b;
    const diagonal = ([x0, y0, z0, x1, y1, z1]) => Math.hypot(x1 - x0, y1 - y0, z1 - z0);
    let fittedSize = 0;

    let pendingRender = null;
    viewer.onRendered = (version) => {
      const renderedAt = performance.now();
      if (!pendingRender) return;
      const { requestedAt, receivedAt, header } = pendingRender;
      pendingRender = null;
      showStats(header, receivedAt - requestedAt, renderedAt - requestedAt);
      pane.dispatchEvent(new CustomEvent('lsystem-rendered', { detail: { version, requestedAt, receivedAt, renderedAt, header } }));
    };

    function showStats(h, roundTrip, toScreen) {
      const t = h.timings;
      const lines = [
        `modules   ${formatCount(h.modules)}  (${formatCount(h.modules_total)} over ${h.iterations} steps)`,
        `segments  ${formatCount(h.segments)}   polygons ${formatCount(h.polygons)}`,
        `parse ${formatMs(t.parse_ms)}  derive ${formatMs(t.derive_ms)}`,
        `interpret ${formatMs(t.interpret_ms)}  encode ${formatMs(t.encode_ms)}`,
        `server ${formatMs(t.total_ms)}  round trip ${formatMs(roundTrip)}`,
      ];
      if (h.lod) lines.push(`first view ${formatCount(h.lod.segments)} segments (${h.lod.cell} px grid, lod ${formatMs(t.lod_ms)})`);
      if (toScreen !== null) lines.push(`on screen ${formatMs(toScreen)}  (${h.backend}, ${h.threads} thr)`);
      stats.textContent = lines.join('\n');
    }

    /** The sliders show the file's values unless moved; one slider per #define. */
    function syncControls(h) {
      const file = h.file;
      iterations.setRange(0, Math.max(12, file.derivation_length + 4));
      if (overrides.iterations === undefined) iterations.set(file.derivation_length);
      if (overrides.angle === undefined) angle.set(file.angle);
      if (overrides.seed === undefined) seed.set(Number(file.seed ?? 1));
      const names = file.defines.map((d) => d.name);
      const same = names.length === defineSliders.size && names.every((n) => defineSliders.has(n));
      if (!same) {
        for (const name of Object.keys(defineOverrides)) if (!names.includes(name)) delete defineOverrides[name];
        for (const row of [...definesBox.querySelectorAll('.row')]) row.remove();
        defineSliders = new Map();
        for (const { name, value } of file.defines) {
          const range = defineRange(value);
          defineSliders.set(name, slider(definesBox, {
            key: `define-${name}`, label: name, ...range, value,
            format: (v) => String(Number(v.toPrecision(6))),
            onInput: (v) => { defineOverrides[name] = v; schedule(); },
          }));
        }
      }
      definesBox.style.display = names.length === 0 ? 'none' : '';
      for (const { name, value } of file.defines) if (!(name in defineOverrides)) defineSliders.get(name)?.set(value);
    }

    function showError(error) {
      editor.showError(error && error.line ? error : null);
      if (!error) {
        errorBox.textContent = '';
        return;
      }
      const where = error.line ? `line ${error.line}:${error.column}: ` : '';
      errorBox.textContent = `${error.kind ?? 'error'}: ${where}${error.message}`;
    }

    async function loadExample(path) {
      try {
        const text = await getText('/api/' + path);
        modelName = path.split('/').pop().replace(/\.l$/, '');
        for (const k of Object.keys(overrides)) delete overrides[k];
        defineOverrides = {};
        fitNext = true;
        editor.setText(text);  // schedules the update
      } catch (error) {
        showError(error);
      }
    }

    getJson('/api/examples').then((list) => {
      const models = list.filter((e) => e.kind === 'lsystem');
      setOptions(examples, models.map((e) => [e.path, e.title ? `${e.name} — ${e.title}` : e.name]));
      const start = models.some((e) => e.path === DEFAULT_EXAMPLE) ? DEFAULT_EXAMPLE : models[0]?.path;
      if (start) {
        examples.value = start;
        loadExample(start);
      }
    }).catch(showError);

    return { activate() { viewer.resize(); } };
  },
};
