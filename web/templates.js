// The prompt templates editor (on the settings page): pick a level and a file, edit it, save it
// (the server checks it as a run would) or remove it.
import { api } from './api.js';
import { h, toast } from './dom.js';
import { errorSlot } from './errors.js';

const NAMES = [
  'input.md',
  'output.md',
  ...['scout', 'plan', 'fix', 'review', 'interactive'].flatMap((type) => [
    `${type}.input.md`,
    `${type}.output.md`,
  ]),
];

export async function templatesEditor() {
  let t = await api('GET', '/api/templates');
  const level = h(
    'select',
    { id: 't-level', 'aria-label': 'template level' },
    h('option', { value: 'project' }, `project (${t.dirs.project})`),
    h('option', { value: 'global' }, `global (${t.dirs.global ?? 'none'})`),
  );
  const name = h(
    'select',
    { id: 't-name', 'aria-label': 'template file' },
    NAMES.map((n) => h('option', { value: n }, n)),
  );
  const textarea = h('textarea', { id: 't-text', 'aria-label': 'template text', rows: '12' });
  const note = h('span', { class: 'muted', id: 't-note' });
  const failed = errorSlot();
  let types = typesList(t.types);
  const describe = () => {
    const own = t.files[level.value].find((f) => f.name === name.value);
    const builtin = t.builtin.find((f) => f.name === name.value);
    note.textContent = own
      ? 'this level has the file'
      : builtin
        ? 'not at this level: the built-in default is shown'
        : 'not at this level';
    return own?.text ?? builtin?.text ?? '';
  };
  const load = () => {
    textarea.value = describe();
  };
  /** After a save or a removal: the note and the list say what the server now holds. */
  const reread = async () => {
    t = await api('GET', '/api/templates');
    const fresh = typesList(t.types);
    types.replaceWith(fresh);
    types = fresh;
    describe();
  };
  level.addEventListener('change', load);
  name.addEventListener('change', load);
  load();
  return h(
    'div',
    { id: 'templates' },
    types,
    h('div', { class: 'filters' }, level, name, note),
    textarea,
    h('div', { class: 'actions' }, ...buttons(level, name, textarea, reread, load, failed)),
    failed.el,
  );
}

/** Which files each run type reads now, as the server resolved them. */
const typesList = (types) =>
  h(
    'ul',
    {},
    Object.entries(types).map(([type, v]) =>
      h(
        'li',
        {},
        `${type}: input ${v.globalInput ?? '—'}${v.projectInput ? ` + ${v.projectInput}` : ''}; output ${v.output ?? '— (the raw answer)'}`,
      ),
    ),
  );

function buttons(level, name, textarea, reread, load, failed) {
  const save = h(
    'button',
    {
      class: 'primary',
      onclick: async () => {
        failed.clear();
        try {
          await api('PUT', '/api/templates', { level: level.value, name: name.value, text: textarea.value });
          toast('template saved: it applies to the next run');
          await reread();
        } catch (err) {
          failed.show('Save template', err, save);
        }
      },
    },
    'Save template',
  );
  const remove = h(
    'button',
    {
      class: 'danger',
      onclick: async () => {
        if (!window.confirm(`Remove ${name.value} from the ${level.value} templates?`)) return;
        failed.clear();
        try {
          await api('PUT', '/api/templates', { level: level.value, name: name.value, text: null });
          toast('template removed');
          await reread();
          load();
        } catch (err) {
          failed.show('Remove', err, remove);
        }
      },
    },
    'Remove',
  );
  return [save, remove];
}
