// The studio's code editor: CodeMirror 6 with the .l language (a small stream
// tokenizer: comments, directives, #define, numbers, arrows) or XML (flam3
// genomes), and diagnostics at line:col from the server's parse errors.
import { EditorView, basicSetup } from 'codemirror';
import { StreamLanguage } from '@codemirror/language';
import { xml } from '@codemirror/lang-xml';
import { setDiagnostics } from '@codemirror/lint';
import { oneDarkish } from './theme.js';

const directives = /^(lsystem|derivation length|axiom|ignore|consider|seed|endlsystem|homomorphism|decomposition|endhomomorphism|enddecomposition|maximum depth|no warnings|warnings|ring l-system|turtle|view)\b:?/i;

/** The .l language (docs/lsystem-language.md), enough for highlighting. */
export const lsystemLanguage = StreamLanguage.define({
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo('*/')) { stream.match('*/'); state.inComment = false; } else stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('/*')) { state.inComment = true; return 'comment'; }
    if (stream.match('//')) { stream.skipToEnd(); return 'comment'; }
    if (stream.sol() && stream.match(/^\s*#\s*(define|include|ifdef|ifndef|if|else|endif)\b/)) return 'meta';
    if (stream.sol() && stream.match(directives)) return 'keyword';
    if (stream.match(/^-->|^->|^:|^<|^>/)) return 'operator';
    if (stream.match(/^\d+(\.\d*)?([eE][-+]?\d+)?|^\.\d+/)) return 'number';
    if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*(?=\()/)) return 'variableName';
    if (stream.match(/^[A-Z]/)) return 'typeName';
    stream.next();
    return null;
  },
  languageData: { commentTokens: { block: { open: '/*', close: '*/' } } },
});

/**
 * createEditor(parent, {doc, language: 'lsystem'|'xml', onChange(text)})
 * → {view, getText(), setText(text), showError({line, column, message}|null)}
 */
export function createEditor(parent, { doc = '', language = 'lsystem', onChange } = {}) {
  const view = new EditorView({
    doc,
    parent,
    extensions: [
      basicSetup,
      language === 'xml' ? xml() : lsystemLanguage,
      oneDarkish,
      EditorView.updateListener.of((update) => { if (update.docChanged) onChange?.(update.state.doc.toString()); }),
    ],
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(text) { view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }); },
    /** Marks the error's position (1-based line and byte column) or clears the marks. */
    showError(error) {
      const diagnostics = [];
      if (error && error.line >= 1) {
        const doc = view.state.doc;
        const line = doc.line(Math.min(error.line, doc.lines));
        const from = Math.min(line.from + Math.max(0, (error.column ?? 1) - 1), line.to);
        diagnostics.push({ from, to: Math.min(from + 1, line.to), severity: 'error', message: error.message });
      }
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
  };
}
