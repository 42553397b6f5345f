// Small DOM helpers shared by the tabs: labelled sliders, selects, buttons,
// a stats box, debouncing. Every control gets data-testid = its key.
export function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  for (const c of children) node.append(c);
  return node;
}

/** A labelled range input with its value shown; onInput(value) on every move. */
export function slider(parent, { key, label, min, max, step = 1, value, format = (v) => String(v), onInput }) {
  const input = el('input', { type: 'range', min, max, step, value });
  input.dataset.testid = key;
  const output = el('output', { textContent: format(Number(value)) });
  input.addEventListener('input', () => { output.textContent = format(Number(input.value)); onInput?.(Number(input.value)); });
  parent.append(el('div', { className: 'row' }, el('label', { textContent: label }), input, output));
  return {
    input,
    get value() { return Number(input.value); },
    set(v) { input.value = v; output.textContent = format(Number(input.value)); },
    setRange(lo, hi) { input.min = lo; input.max = hi; },
  };
}

/** A labelled select; options = [[value, text], …] or [value, …]. */
export function select(parent, { key, label, options, value, onChange }) {
  const node = el('select');
  node.dataset.testid = key;
  setOptions(node, options);
  if (value !== undefined) node.value = value;
  node.addEventListener('change', () => onChange?.(node.value));
  parent.append(el('div', { className: 'row' }, el('label', { textContent: label }), node));
  return node;
}

export function setOptions(node, options) {
  node.replaceChildren(...options.map((o) => (Array.isArray(o) ? el('option', { value: o[0], textContent: o[1] }) : el('option', { value: o, textContent: o }))));
}

export function button(parent, { key, text, onClick }) {
  const node = el('button', { textContent: text });
  node.dataset.testid = key;
  node.addEventListener('click', onClick);
  parent.append(node);
  return node;
}

/** Calls fn after `ms` without further calls (the newest arguments win). */
export function debounce(fn, ms) {
  let timer = 0;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

export function formatCount(n) {
  return Number(n).toLocaleString('en-US');
}

export function formatMs(ms) {
  return ms < 10 ? ms.toFixed(2) + ' ms' : ms < 1000 ? ms.toFixed(1) + ' ms' : (ms / 1000).toFixed(2) + ' s';
}

/** The backend and thread choice every tab shows; `info` is /api/info. */
export function executionControls(parent, info, onChange) {
  const backends = Object.entries(info.backends).filter(([, on]) => on).map(([name]) => name);
  const backend = select(parent, { key: 'backend', label: 'Backend', options: backends, value: backends.includes('cpu') ? 'cpu' : backends[0], onChange });
  const threads = select(parent, {
    key: 'threads', label: 'Threads',
    options: Array.from({ length: info.hardware_threads }, (_, i) => String(i + 1)),
    value: String(info.hardware_threads), onChange,
  });
  return () => ({ backend: backend.value, threads: Number(threads.value) });
}

/**
 * A tab's two columns: `controls` (class "controls <name>-controls") and
 * `view`, with the stats box over the view (data-testid="stats").
 */
export function tabLayout(pane, name, { viewClass = '', statsText = '' } = {}) {
  const controls = el('div', { className: `controls ${name}-controls` });
  const view = el('div', { className: `view ${viewClass}`.trim() });
  pane.append(controls, view);
  return { controls, view, stats: statsBox(statsText) };
}

/** The stats box (data-testid="stats"); the caller places it. */
export function statsBox(text = '') {
  const stats = el('div', { className: 'stats', textContent: text });
  stats.dataset.testid = 'stats';
  return stats;
}

/** The error box every tab shows its server errors in (data-testid="error"). */
export function errorBox() {
  const box = el('div', { className: 'error' });
  box.dataset.testid = 'error';
  return box;
}
