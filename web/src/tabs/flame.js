// The Flame tab (issue 20). PLACEHOLDER: being written.
import { el } from '../ui.js';

export default {
  id: 'flame',
  title: 'Flame',
  create(pane) {
    pane.append(el('div', { className: 'controls' }, el('p', { className: 'muted', textContent: 'Flame: coming' })), el('div', { className: 'view' }));
    return {};
  },
};
