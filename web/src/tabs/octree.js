// The Octree tab (issue 20). PLACEHOLDER: being written.
import { el } from '../ui.js';

export default {
  id: 'octree',
  title: 'Octree',
  create(pane) {
    pane.append(el('div', { className: 'controls' }, el('p', { className: 'muted', textContent: 'Octree: coming' })), el('div', { className: 'view' }));
    return {};
  },
};
