// The L-system tab (issue 20). PLACEHOLDER: being written.
import { el } from '../ui.js';

export default {
  id: 'lsystem',
  title: 'L-system',
  create(pane) {
    pane.append(el('div', { className: 'controls' }, el('p', { className: 'muted', textContent: 'L-system: coming' })), el('div', { className: 'view' }));
    return {};
  },
};
