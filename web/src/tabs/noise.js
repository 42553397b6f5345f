// The Noise tab (issue 20). PLACEHOLDER: being written.
import { el } from '../ui.js';

export default {
  id: 'noise',
  title: 'Noise',
  create(pane) {
    pane.append(el('div', { className: 'controls' }, el('p', { className: 'muted', textContent: 'Noise: coming' })), el('div', { className: 'view' }));
    return {};
  },
};
