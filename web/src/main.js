// procgen studio: the page. A tab per system (L-system, noise, flame,
// octree); each tab is created on its first visit and owns its controls,
// its Viewer and its Channels (web/src/tabs/*.js). Tab state lives in the URL
// hash (#lsystem, #noise, …), so a reload comes back to the same tab.
import { getJson } from './api.js';
import { el } from './ui.js';
import lsystemTab from './tabs/lsystem.js';
import noiseTab from './tabs/noise.js';
import flameTab from './tabs/flame.js';
import octreeTab from './tabs/octree.js';

const tabs = [lsystemTab, noiseTab, flameTab, octreeTab];

async function start() {
  const status = document.getElementById('server-status');
  let info;
  try {
    info = await getJson('/api/info');
    const backends = Object.entries(info.backends).filter(([, on]) => on).map(([b]) => b).join(', ');
    status.textContent = `backends: ${backends} · ${info.hardware_threads} threads`;
  } catch (error) {
    status.textContent = 'server unreachable: ' + error.message;
    status.className = 'error';
    return;
  }
  const nav = document.getElementById('tabs');
  const panes = document.getElementById('panes');
  const created = new Map();
  const buttons = new Map();
  function show(id) {
    const tab = tabs.find((t) => t.id === id) ?? tabs[0];
    for (const t of tabs) {
      buttons.get(t.id).setAttribute('aria-selected', String(t === tab));
      created.get(t.id)?.pane.classList.toggle('active', t === tab);
    }
    if (!created.has(tab.id)) {
      const pane = el('section', { className: 'pane active', id: `pane-${tab.id}` });
      pane.dataset.testid = `pane-${tab.id}`;
      panes.append(pane);
      created.set(tab.id, { pane, instance: tab.create(pane, { info }) });
    }
    created.get(tab.id).instance?.activate?.();
    if (location.hash !== '#' + tab.id) history.replaceState(null, '', '#' + tab.id);
  }
  for (const tab of tabs) {
    const b = el('button', { textContent: tab.title, role: 'tab' });
    b.dataset.testid = `tab-${tab.id}`;
    b.addEventListener('click', () => show(tab.id));
    buttons.set(tab.id, b);
    nav.append(b);
  }
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
  show(location.hash.slice(1));
}

start();
