// A question that wants a text (Inject's message, Resume's instructions): a modal <dialog> in the
// page, with a labelled multi-line field, Send and Cancel. window.prompt() gave one line, no
// label, and the browser's own look. Outside <main>, so a live update never redraws it.
import { h } from './dom.js';

/**
 * Asks for a text; resolves with it (trimmed), or null when the person cancels (Cancel, Escape).
 * `optional`: an empty answer is an answer (''), else Send waits for a text. Ctrl+Enter sends.
 */
export function askText({ title, label, send, optional = false, hint = '' }) {
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const field = h('textarea', { id: 'ask-text', rows: '5', required: optional ? undefined : true });
    const dialog = h(
      'dialog',
      { id: 'ask', 'aria-labelledby': 'ask-title', 'aria-describedby': hint ? 'ask-hint' : undefined },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'ask-title' }, title),
        h('label', { for: 'ask-text' }, label),
        field,
        hint ? h('p', { class: 'muted', id: 'ask-hint' }, hint) : null,
        h(
          'div',
          { class: 'actions' },
          h('button', { class: 'primary', value: 'send' }, send),
          h('button', { type: 'button', value: 'cancel', onclick: () => dialog.close('cancel') }, 'Cancel'),
        ),
      ),
    );
    field.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) dialog.querySelector('button.primary').click();
    });
    dialog.addEventListener('close', () => {
      const text = dialog.returnValue === 'send' ? field.value.trim() : null;
      dialog.remove();
      opener?.focus?.();
      resolve(text);
    });
    document.body.append(dialog);
    dialog.showModal();
    field.focus();
  });
}
