// The Flame tab (issue 20 point 4): a flam3 genome in an XML editor, sliders
// for each xform's weight and colour and the flame's gamma, brightness and
// vibrancy, and a progressive render — the image refines pass by pass while
// the server's chaos game accumulates (POST /api/flame/render, a stream of
// PNG frames; docs/studio.md "### Flame").
//
// The editor's text is the single source of truth: a slider edits the XML
// (DOMParser → setAttribute → XMLSerializer, applied to the editor as the
// smallest text change), so "save genome" saves exactly what is rendered.
import { Channel, getJson, getText, isSuperseded } from '../api.js';
import { createEditor } from '../editor.js';
import { button, debounce, el, errorBox as makeErrorBox, executionControls, formatCount, formatMs, select, setOptions, slider, tabLayout } from '../ui.js';

const WIDTHS = [320, 480, 640, 960, 1280, 1920];

/** A number as an XML attribute value: at most 6 decimals, no trailing zeros. */
const attr = (v) => String(Number(Number(v).toFixed(6)));

/** Offset of the root element's start tag (after the declaration, comments, doctype). */
function rootOffset(text) {
  for (let at = text.indexOf('<'); at >= 0; at = text.indexOf('<', at + 1)) {
    if (text.startsWith('<!--', at)) at = text.indexOf('-->', at);
    else if (text.startsWith('<?', at)) at = text.indexOf('?>', at);
    else if (text.startsWith('<!', at)) at = text.indexOf('>', at);
    else return at;
    if (at < 0) break;
  }
  return 0;
}

/**
 * Applies `edit(flameElement)` to flame `index` of the XML `text`; returns the
 * new text, or null when the text is not well-formed XML (the server shows why).
 * The serializer normalizes what the DOM does not keep — the whitespace
 * around the root element, CRLF line ends — so those parts are restored from
 * `text`, and the edit stays one small change in the editor.
 */
function editGenome(text, index, edit) {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length) return null;
  const flame = doc.getElementsByTagName('flame')[index];
  if (!flame) return null;
  edit(flame);
  let out = new XMLSerializer().serializeToString(doc);
  if (text.includes('\r\n')) out = out.replace(/\r?\n/g, '\r\n');
  const trailing = /\s*$/.exec(text)[0];
  out = text.slice(0, rootOffset(text)) + out.slice(rootOffset(out)).replace(/\s*$/, '') + trailing;
  return out;
}

/** The one change {from, to, insert} that turns `a` into `b` (common prefix and suffix kept). */
function smallestChange(a, b) {
  let start = 0;
  const max = Math.min(a.length, b.length);
  while (start < max && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  let endA = a.length, endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) { endA--; endB--; }
  return { from: start, to: endA, insert: b.slice(start, endB) };
}

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export default {
  id: 'flame',
  title: 'Flame',
  create(pane, { info }) {
    const { controls, view, stats } = tabLayout(pane, 'flame', { viewClass: 'flame-view', statsText: 'loading…' });

    const genomeChannel = new Channel('/api/flame/genome');
    const renderChannel = new Channel('/api/flame/render');
    let description = null;  // the last good /api/flame/genome reply
    let flameIndex = 0;
    let lastPng = null;      // Blob of the last image shown
    let renderGeneration = 0;
    let rendered = 0;
    let drawing = Promise.resolve();
    let sliderSignature = '';

    // --- Genome: example, file, editor -----------------------------------
    const exampleSelect = select(controls, { key: 'example', label: 'Example', options: [], onChange: (path) => loadExample(path) });
    const flameSelect = select(controls, {
      key: 'flame-index', label: 'Flame', options: [['0', '0']],
      onChange: (v) => { flameIndex = Number(v); buildSliders(true); render(); },
    });
    const fileInput = el('input', { type: 'file', accept: '.flam3,.flame,.xml,application/xml,text/xml', hidden: true });
    fileInput.dataset.testid = 'open-file';
    fileInput.addEventListener('change', async () => {
      const file = fileInput.files?.[0];
      if (!file) return;
      if (file.size > 4 << 20) { showMessage(`${file.name} is ${formatCount(file.size)} bytes; the studio reads genomes up to 4 MiB`); return; }
      exampleSelect.value = '';
      replaceGenome(await file.text());
      fileInput.value = '';
    });
    const fileRow = el('div', { className: 'row' });
    button(fileRow, { key: 'open', text: 'Open .flam3…', onClick: () => fileInput.click() });
    fileRow.append(fileInput, el('span', { className: 'muted', textContent: 'or paste into the editor' }));
    controls.append(fileRow);

    const editorBox = el('div', { className: 'editor flame-editor' });
    editorBox.dataset.testid = 'editor';
    controls.append(editorBox);
    let editingBySlider = false, replacing = false;
    const editor = createEditor(editorBox, {
      language: 'xml',
      onChange: () => { if (replacing) return; if (editingBySlider) renderSoon(); else describeSoon(); },
    });
    /** A new genome (an example, a file): described at once, not after the typing debounce. */
    function replaceGenome(text) {
      flameIndex = 0;
      replacing = true;
      try { editor.setText(text); } finally { replacing = false; }
      describe();
    }
    const errorBox = makeErrorBox();
    const warningBox = el('div', { className: 'muted flame-warnings' });
    controls.append(errorBox, warningBox);

    // --- Sliders ----------------------------------------------------------
    const toneBox = el('fieldset', {}, el('legend', { textContent: 'Tone' }));
    const xformBox = el('fieldset', {}, el('legend', { textContent: 'Xforms' }));
    controls.append(toneBox, xformBox);

    /** Sets attribute `name` of the element `pick(flame)` to `value` in the editor's text. */
    function editAttribute(pick, name, value) {
      const before = editor.getText();
      const after = editGenome(before, flameIndex, (flame) => {
        const node = pick(flame);
        if (!node) return;
        if (name === 'color') {  // "c1 c2": flam3 reads c1; keep c2
          const words = (node.getAttribute('color') ?? '').trim().split(/\s+/);
          words[0] = attr(value);
          node.setAttribute('color', words.filter((w) => w !== '').join(' '));
        } else {
          node.setAttribute(name, attr(value));
        }
      });
      if (after === null) { showMessage('the genome is not well-formed XML: fix it in the editor to use the sliders'); return; }
      if (after === before) return;
      editingBySlider = true;
      try { editor.view.dispatch({ changes: smallestChange(before, after) }); } finally { editingBySlider = false; }
    }
    const childElement = (tag, k) => (flame) => Array.from(flame.children).filter((c) => c.tagName === tag)[k];

    const sliders = new Map();  // key → slider
    function addSlider(parent, key, label, value, min, max, step, onInput) {
      const lo = Math.min(min, value), hi = Math.max(max, value);
      const s = slider(parent, { key, label, min: lo, max: hi, step, value, format: (v) => attr(v), onInput });
      sliders.set(key, s);
      return s;
    }

    /** (Re)builds the sliders when the flame's structure changed, else updates their values. */
    function buildSliders(force = false) {
      const flame = description?.flames?.[flameIndex];
      if (!flame) return;
      const signature = `${flameIndex}|${flame.xforms.map((x) => x.element).join(',')}|${flame.final_xform ? 'f' : ''}`;
      if (!force && signature === sliderSignature) {
        const set = (key, v) => sliders.get(key)?.set(v);
        set('gamma', flame.gamma); set('brightness', flame.brightness); set('vibrancy', flame.vibrancy);
        flame.xforms.forEach((x) => { if (x.element !== null) { set(`xform-${x.element}-weight`, x.weight); set(`xform-${x.element}-color`, x.color); } });
        if (flame.final_xform) set('final-color', flame.final_xform.color);
        return;
      }
      sliderSignature = signature;
      sliders.clear();
      toneBox.replaceChildren(el('legend', { textContent: 'Tone' }));
      xformBox.replaceChildren(el('legend', { textContent: `Xforms (${flame.xforms.length})` }));
      const self = (f) => f;
      addSlider(toneBox, 'gamma', 'Gamma', flame.gamma, 0.5, 8, 0.05, (v) => editAttribute(self, 'gamma', v));
      addSlider(toneBox, 'brightness', 'Brightness', flame.brightness, 0.1, 20, 0.1, (v) => editAttribute(self, 'brightness', v));
      addSlider(toneBox, 'vibrancy', 'Vibrancy', flame.vibrancy, 0, 1, 0.01, (v) => editAttribute(self, 'vibrancy', v));
      for (const x of flame.xforms) {
        if (x.element === null) continue;  // added by <symmetry>: no element to edit
        const k = x.element;
        const names = x.variations.map((v) => v.name).join(' + ');
        xformBox.append(el('div', { className: 'muted flame-xform-title', textContent: `${k}: ${names}` }));
        addSlider(xformBox, `xform-${k}-weight`, 'weight', x.weight, 0, Math.max(1, Math.ceil(x.weight * 2)), 0.001,
          (v) => editAttribute(childElement('xform', k), 'weight', v));
        addSlider(xformBox, `xform-${k}-color`, 'colour', x.color, 0, 1, 0.001,
          (v) => editAttribute(childElement('xform', k), 'color', v));
      }
      const added = flame.xforms.length - flame.xforms.filter((x) => x.element !== null).length;
      if (added) xformBox.append(el('div', { className: 'muted', textContent: `+ ${added} from <symmetry kind="${flame.symmetry_kind}">` }));
      if (flame.final_xform) {
        xformBox.append(el('div', { className: 'muted flame-xform-title', textContent: `final: ${flame.final_xform.variations.map((v) => v.name).join(' + ')}` }));
        addSlider(xformBox, 'final-color', 'colour', flame.final_xform.color, 0, 1, 0.001,
          (v) => editAttribute(childElement('finalxform', 0), 'color', v));
      }
    }

    // --- Render settings and saving -----------------------------------------
    const renderBox = el('fieldset', {}, el('legend', { textContent: 'Render' }));
    controls.append(renderBox);
    const quality = slider(renderBox, { key: 'quality', label: 'Quality', min: 1, max: 200, step: 1, value: 25, onInput: () => renderSoon() });
    const sizeSelect = select(renderBox, { key: 'size', label: 'Width', options: WIDTHS.map(String), value: '640', onChange: () => render() });
    const passesSelect = select(renderBox, { key: 'passes', label: 'Passes', options: ['1', '2', '3', '4', '5', '6', '7', '8'], value: '5', onChange: () => render() });
    const seed = slider(renderBox, { key: 'seed', label: 'Seed', min: 1, max: 100, step: 1, value: 1, onInput: () => renderSoon() });
    const execution = executionControls(renderBox, info, () => render());
    const saveRow = el('div', { className: 'row' });
    const flameName = () => (description?.flames?.[flameIndex]?.name || exampleSelect.value.split('/').pop()?.replace(/\.[^.]*$/, '') || 'flame').replace(/[^\w.-]+/g, '_');
    button(saveRow, { key: 'save-png', text: 'Save PNG', onClick: () => { if (lastPng) download(lastPng, `${flameName()}.png`); } });
    button(saveRow, { key: 'save-genome', text: 'Save genome', onClick: () => download(new Blob([editor.getText()], { type: 'application/xml' }), `${flameName()}.flam3`) });
    controls.append(saveRow);

    // --- The view -----------------------------------------------------------
    const canvas = el('canvas', { className: 'flame-canvas', width: 640, height: 360 });
    canvas.dataset.testid = 'flame-canvas';
    canvas.dataset.rendered = '0';
    const context = canvas.getContext('2d');
    const progress = el('div', { className: 'flame-progress' });
    progress.dataset.testid = 'progress';
    view.append(canvas, stats, progress);

    // --- Requests -------------------------------------------------------------
    function showMessage(message) { errorBox.textContent = message; }
    function showFailure(error) {
      editor.showError(error.kind === 'parse' ? error : null);
      errorBox.textContent = error.kind === 'parse' ? `${error.line}:${error.column}: ${error.message}` : error.message;
    }
    function clearFailure() {
      editor.showError(null);
      errorBox.textContent = '';
    }

    /** Refreshes the description (sliders, flame list) from the editor's text, then renders. */
    async function describe() {
      let reply;
      try {
        reply = await genomeChannel.post({ genome: editor.getText() });
      } catch (error) {
        if (!isSuperseded(error)) showFailure(error);
        return;
      }
      description = reply;
      warningBox.textContent = (reply.warnings ?? []).join('\n');
      if (flameIndex >= reply.flames.length) flameIndex = 0;
      setOptions(flameSelect, reply.flames.map((f, i) => [String(i), `${i}${f.name ? ': ' + f.name : ''} (${f.xforms.length} xforms)`]));
      flameSelect.value = String(flameIndex);
      clearFailure();
      buildSliders();
      render();
    }
    const describeSoon = debounce(describe, 200);

    function renderSize() {
      const [gw, gh] = description?.flames?.[flameIndex]?.size ?? [16, 9];
      const width = Number(sizeSelect.value);
      return { width, height: Math.max(1, Math.min(2048, Math.round((width * gh) / gw))) };
    }

    async function render() {
      if (!description) return;
      const generation = ++renderGeneration;
      const params = {
        genome: editor.getText(), flame: flameIndex, ...renderSize(), quality: quality.value,
        passes: Number(passesSelect.value), seed: seed.value, ...execution(),
      };
      progress.textContent = 'rendering…';
      try {
        await renderChannel.stream(params, (frame) => {
          drawing = drawing.then(() => show(frame, generation)).catch((e) => showMessage(String(e?.message ?? e)));
        });
      } catch (error) {
        if (isSuperseded(error) || generation !== renderGeneration) return;
        progress.textContent = '';
        showFailure(error);  // the last good image stays on the canvas
      }
    }
    const renderSoon = debounce(render, 30);

    async function show(frame, generation) {
      const h = frame.header;
      const png = new Blob([frame.buffers.png], { type: 'image/png' });
      const bitmap = await createImageBitmap(png);
      if (generation !== renderGeneration) { bitmap.close(); return; }
      if (canvas.width !== bitmap.width || canvas.height !== bitmap.height) {
        canvas.width = bitmap.width;
        canvas.height = bitmap.height;
      }
      context.drawImage(bitmap, 0, 0);
      bitmap.close();
      lastPng = png;
      if (h.pass === 1) clearFailure();
      stats.textContent = [
        `${h.width}×${h.height} · pass ${h.pass}/${h.passes}`,
        `${formatCount(h.samples)} samples · quality ${attr(h.quality_so_far)}/${attr(h.quality)}`,
        `iterate ${formatMs(h.iter_ms)} · tone map ${formatMs(h.tonemap_ms)}`,
        `total ${formatMs(h.total_ms)} · ${h.backend} ×${h.threads}`,
      ].join('\n');
      progress.textContent = h.final ? '' : `pass ${h.pass}/${h.passes}…`;
      canvas.dataset.rendered = String(++rendered);
      canvas.dataset.pass = String(h.pass);
      canvas.dataset.final = String(h.final);
    }

    async function loadExample(path) {
      if (!path) return;
      try {
        replaceGenome(await getText('/api/' + path));
      } catch (error) {
        showFailure(error);
      }
    }

    (async () => {
      try {
        const examples = (await getJson('/api/examples')).filter((e) => e.kind === 'flame');
        setOptions(exampleSelect, [['', '(your genome)'], ...examples.map((e) => [e.path, e.title || e.name])]);
        const first = examples.find((e) => e.name === 'mixed') ?? examples[0];
        if (first) { exampleSelect.value = first.path; await loadExample(first.path); }
      } catch (error) {
        showFailure(error);
      }
    })();

    return { activate() {} };
  },
};
