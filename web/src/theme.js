// A dark CodeMirror theme matching studio.css.
import { EditorView } from 'codemirror';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';

const theme = EditorView.theme({
  '&': { color: '#d8dce4', backgroundColor: '#15171c' },
  '.cm-content': { caretColor: '#6cb6ff' },
  '.cm-gutters': { backgroundColor: '#1d2027', color: '#5d6574', border: 'none' },
  '.cm-activeLine': { backgroundColor: '#1f232b' },
  '.cm-activeLineGutter': { backgroundColor: '#1f232b' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: '#2d3a4f !important' },
}, { dark: true });

const highlight = HighlightStyle.define([
  { tag: tags.comment, color: '#7d8799' },
  { tag: tags.keyword, color: '#ff9e64' },
  { tag: tags.meta, color: '#c099ff' },
  { tag: tags.number, color: '#79c0ff' },
  { tag: tags.operator, color: '#f778ba' },
  { tag: tags.typeName, color: '#7ee787' },
  { tag: tags.variableName, color: '#ffd580' },
  { tag: [tags.tagName, tags.angleBracket], color: '#7ee787' },
  { tag: tags.attributeName, color: '#ffd580' },
  { tag: tags.attributeValue, color: '#79c0ff' },
]);

export const oneDarkish = [theme, syntaxHighlighting(highlight)];
