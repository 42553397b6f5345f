// The L-system language front end: cpfg / ABOP `.l` text -> the flat tables of
// tables.h (paper §4.1, Figure 2: productions in a table indexed by the
// predecessor letter with collision chains, successor module and parameter
// counts in a header, formal parameters translated to numeric slots).
//
// Stages: lexer.cpp strips comments and yields logical lines with positions;
// each line is classified (preprocessor directive, `key: value` directive,
// section keyword, production); a production is split at its arrow into
// `lc < pred > rc : condition` and `successor : probability`, the module lists
// are scanned into symbols plus parameter ranges, and every parameter range is
// compiled by expr_compiler.cpp. Constant expressions (#define, axiom,
// probabilities, directive values) are evaluated at compile time with pgEval.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "lsystem/expr_compiler.hpp"
#include "lsystem/lexer.hpp"
#include "lsystem/lsystem_data.hpp"
#include "procgen/error.hpp"
#include "procgen/input.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace detail {
namespace {

/// One module as written: its symbol and the text ranges of its parameters.
struct RawModule {
  uint8_t symbol;
  size_t pos;
  std::vector<std::pair<size_t, size_t>> params;
};

size_t skipSpace(const std::string& t, size_t pos, size_t end) {
  while (pos < end && isSpace(t[pos])) ++pos;
  return pos;
}

size_t trimEnd(const std::string& t, size_t begin, size_t end) {
  while (end > begin && isSpace(t[end - 1])) --end;
  return end;
}

/// Position of the first `c` outside parentheses in [begin, end), or npos.
size_t findTopLevel(const std::string& t, size_t begin, size_t end, char c) {
  int depth = 0;
  for (size_t i = begin; i < end; ++i) {
    if (t[i] == '(') ++depth;
    else if (t[i] == ')') depth = depth > 0 ? depth - 1 : 0;
    else if (t[i] == c && depth == 0) return i;
  }
  return std::string::npos;
}

bool isStar(const std::string& t, size_t begin, size_t end) {
  begin = skipSpace(t, begin, end);
  end = trimEnd(t, begin, end);
  return end == begin + 1 && t[begin] == '*';
}

/// Scans a module list: symbols (printable ASCII except parentheses), each
/// optionally followed by a parenthesised, comma-separated parameter list.
std::vector<RawModule> scanModules(const LogicalLine& line, size_t pos, size_t end) {
  const std::string& t = line.text;
  std::vector<RawModule> modules;
  for (;;) {
    pos = skipSpace(t, pos, end);
    if (pos >= end) break;
    auto c = static_cast<unsigned char>(t[pos]);
    if (c == '(') line.fail(pos, "parameter list without a module");
    if (c == ')') line.fail(pos, "unbalanced ')'");
    if (c < 33 || c > 126) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      line.fail(pos, std::string("invalid module symbol (byte ") + hex +
                         "); modules are printable ASCII characters");
    }
    RawModule m{c, pos, {}};
    ++pos;
    size_t next = skipSpace(t, pos, end);
    if (next < end && t[next] == '(') {
      size_t open = next;
      size_t start = next + 1;
      int depth = 0;
      size_t i = start;
      for (; i < end; ++i) {
        char d = t[i];
        if (d == '(') {
          ++depth;
        } else if (d == ')') {
          if (depth == 0) break;
          --depth;
        } else if (d == ',' && depth == 0) {
          m.params.emplace_back(start, i);
          start = i + 1;
        }
      }
      if (i >= end) line.fail(open, "unbalanced '(': missing ')'");
      m.params.emplace_back(start, i);
      for (auto [b, e] : m.params)
        if (skipSpace(t, b, e) >= e)
          line.fail(skipSpace(t, b, e), "empty parameter in the list of '" +
                                            std::string(1, static_cast<char>(c)) + "'");
      if (m.params.size() > PG_MAX_MODULE_PARAMS)
        line.fail(open, "too many parameters (at most " + std::to_string(PG_MAX_MODULE_PARAMS) +
                            " per module)");
      pos = i + 1;
    }
    modules.push_back(std::move(m));
  }
  return modules;
}

std::string normalizeKey(const std::string& t, size_t begin, size_t end) {
  std::string key;
  bool space = false;
  for (size_t i = begin; i < end; ++i) {
    char c = t[i];
    if (isSpace(c)) {
      space = !key.empty();
      continue;
    }
    if (space) key.push_back(' ');
    space = false;
    key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return key;
}

/// If the line is `words: value`, returns the normalised key and the position
/// after the colon.
bool splitKey(const LogicalLine& line, size_t begin, std::string& key, size_t& value) {
  const std::string& t = line.text;
  if (begin >= t.size() || !std::isalpha(static_cast<unsigned char>(t[begin]))) return false;
  size_t i = begin;
  while (i < t.size() && (std::isalpha(static_cast<unsigned char>(t[i])) || t[i] == ' ' || t[i] == '\t'))
    ++i;
  if (i >= t.size() || t[i] != ':') return false;
  key = normalizeKey(t, begin, i);
  value = i + 1;
  return true;
}

int toInteger(const LogicalLine& line, size_t pos, float value, int lo, int hi, const char* what) {
  if (!(value >= static_cast<float>(lo) && value <= static_cast<float>(hi)) ||
      value != std::floor(value))
    line.fail(pos, std::string(what) + " must be an integer in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
  return static_cast<int>(value);
}

/// Applies one view-setting directive; false when `key` is not one.
bool applyViewDirective(const std::string& key, const LogicalLine& line, size_t pos,
                        ExprCompiler& expr, ViewSettings& view) {
  const std::string& t = line.text;
  const size_t end = t.size();
  pos = skipSpace(t, pos, end);
  if (key == "angle increment") {
    view.angle_deg = expr.evaluateConstantAll(line, pos, end);
  } else if (key == "angle factor") {
    float n = expr.evaluateConstantAll(line, pos, end);
    if (!(n != 0.0f) || !std::isfinite(n)) line.fail(pos, "angle factor must be non-zero");
    view.angle_deg = 360.0f / n;
  } else if (key == "step length" || key == "step size") {
    view.step = expr.evaluateConstantAll(line, pos, end);
  } else if (key == "initial line width" || key == "initial width") {
    size_t p = pos;
    view.initial_width = expr.evaluateConstant(line, p, end);
    // cpfg writes a unit after the width ("10 pixels"); it is not interpreted.
    size_t w = p;
    while (w < end && isIdentChar(t[w])) ++w;
    if (skipSpace(t, w, end) < end)
      line.fail(skipSpace(t, w, end), "unexpected text after the line width");
  } else if (key == "width scale") {  // procgen extension, see ViewSettings::width_scale
    view.width_scale = expr.evaluateConstantAll(line, pos, end);
  } else if (key == "line width factor" || key == "width factor") {
    view.width_factor = expr.evaluateConstantAll(line, pos, end);
  } else if (key == "initial elasticity" || key == "elasticity") {
    view.elasticity = expr.evaluateConstantAll(line, pos, end);
  } else if (key == "tropism direction") {
    float v[3];
    if (findTopLevel(t, pos, end, ',') != std::string::npos) {
      size_t p = pos;
      for (int i = 0; i < 3; ++i) {
        size_t stop = i < 2 ? findTopLevel(t, p, end, ',') : end;
        if (stop == std::string::npos) line.fail(end, "tropism direction needs three components x, y, z");
        v[i] = expr.evaluateConstantAll(line, p, stop);
        p = i < 2 ? stop + 1 : end;
      }
    } else {
      size_t p = pos;
      for (int i = 0; i < 3; ++i) {
        p = skipSpace(t, p, end);
        size_t e = p;
        while (e < end && !isSpace(t[e])) ++e;
        if (p >= end) line.fail(p, "tropism direction needs three components x, y, z");
        v[i] = expr.evaluateConstantAll(line, p, e);
        p = e;
      }
      p = skipSpace(t, p, end);
      if (p < end) line.fail(p, "tropism direction has more than three components");
    }
    view.tropism = Vec3{v[0], v[1], v[2]};
  } else {
    return false;
  }
  return true;
}

enum Section { kProductions = 0, kDecomposition = 1, kHomomorphism = 2 };

class Parser {
 public:
  Parser(const SourceText& source, LSystemData& data) : source_(source), data_(data), expr_(data) {
    for (auto& last : last_) last.fill(PG_NO_PRODUCTION);
  }

  void run() {
    std::vector<LogicalLine> lines = splitLogicalLines(source_);
    for (const LogicalLine& line : lines) parseLine(line);
    finish();
  }

 private:
  RuleTable& table() {
    return section_ == kProductions ? data_.productions
           : section_ == kDecomposition ? data_.decomposition
                                        : data_.homomorphism;
  }

  void parseLine(const LogicalLine& line) {
    const std::string& t = line.text;
    size_t b = skipSpace(t, 0, t.size());
    if (b >= t.size()) return;
    if (t[b] == '#') return parseHash(line, b);
    std::string whole = normalizeKey(t, b, t.size());
    if (whole == "endlsystem") {
      seen_end_ = true;
      section_ = kProductions;
      return;
    }
    if (whole == "warnings" || whole == "no warnings") return;
    for (const char* name : {"homomorphism", "decomposition"}) {
      size_t n = std::strlen(name);
      if (whole.compare(0, n, name) == 0) {
        std::string rest = whole.substr(n);
        if (rest.empty() || rest == ":" || rest == ": warnings" || rest == ": no warnings" ||
            rest == " warnings" || rest == " no warnings") {
          if (seen_end_) return;
          section_ = name[0] == 'h' ? kHomomorphism : kDecomposition;
          return;
        }
      }
    }
    std::string key;
    size_t value = 0;
    bool has_key = splitKey(line, b, key, value);
    if (has_key && parseDirective(key, line, b, value)) return;
    if (seen_end_) return;  // cpfg ignores whatever follows endlsystem
    if (t[b] == '{')
      line.fail(b, "cpfg pre-/post-condition blocks '{ ... }' are not supported");
    if (findArrow(line, b).first != std::string::npos) return parseProduction(line, b);
    if (has_key && !seen_lsystem_) return;  // unknown cpfg directive before Lsystem:
    if (has_key) line.fail(b, "unknown directive '" + key + ":' in the production section");
    line.fail(b, "expected a production 'predecessor --> successor'");
  }

  void parseHash(const LogicalLine& line, size_t b) {
    const std::string& t = line.text;
    size_t p = b + 1;
    p = skipSpace(t, p, t.size());
    size_t w = p;
    while (w < t.size() && isIdentChar(t[w])) ++w;
    std::string word = t.substr(p, w - p);
    if (word == "define") return parseDefine(line, w);
    if (word == "ignore" || word == "consider") {
      if (w < t.size() && t[w] == ':') ++w;
      return parseSymbolSet(line, b, w, word == "ignore");
    }
    line.fail(b, "unsupported preprocessor directive '#" + word +
                     "' (only #define, #ignore and #consider are supported)");
  }

  void parseDefine(const LogicalLine& line, size_t p) {
    const std::string& t = line.text;
    p = skipSpace(t, p, t.size());
    if (p >= t.size() || !isIdentStart(t[p])) line.fail(p, "expected a name after #define");
    size_t name_pos = p;
    while (p < t.size() && isIdentChar(t[p])) ++p;
    std::string name = t.substr(name_pos, p - name_pos);
    if (p < t.size() && t[p] == '(')
      line.fail(p, "function-like macros are not supported in #define");
    if (ExprCompiler::isFunctionName(name))
      line.fail(name_pos, "#define '" + name + "' redefines a built-in function");
    if (expr_.globalIndex(name) >= 0) line.fail(name_pos, "redefinition of '" + name + "'");
    if (skipSpace(t, p, t.size()) >= t.size())
      line.fail(t.size(), "#define '" + name + "' needs a value");
    float value = expr_.evaluateConstantAll(line, p, t.size());
    expr_.defineGlobal(name, value);
  }

  void parseSymbolSet(const LogicalLine& line, size_t b, size_t p, bool ignore) {
    const std::string& t = line.text;
    int mode = ignore ? 1 : 2;
    if (symbol_mode_ != 0 && symbol_mode_ != mode)
      line.fail(b, "#ignore and #consider cannot both be used");
    symbol_mode_ = mode;
    bool any = false;
    for (size_t i = p; i < t.size(); ++i) {
      auto c = static_cast<unsigned char>(t[i]);
      if (isSpace(t[i])) continue;
      if (c < 33 || c > 126) line.fail(i, "invalid symbol; symbols are printable ASCII characters");
      symbol_set_[c] = 1;
      any = true;
    }
    if (!any) line.fail(t.size(), std::string("expected symbols after ") + (ignore ? "ignore" : "consider"));
  }

  bool parseDirective(const std::string& key, const LogicalLine& line, size_t b, size_t value) {
    const std::string& t = line.text;
    const size_t end = t.size();
    size_t v = skipSpace(t, value, end);
    if (key == "lsystem") {
      if (seen_lsystem_)
        line.fail(b, "more than one L-system in a file (sub-L-systems) is not supported");
      toInteger(line, v, expr_.evaluateConstantAll(line, v, end), 0, 1 << 30, "L-system number");
      seen_lsystem_ = true;
    } else if (key == "derivation length") {
      data_.derivation_length = toInteger(line, v, expr_.evaluateConstantAll(line, v, end), 0,
                                          1 << 30, "derivation length");
    } else if (key == "axiom") {
      if (seen_axiom_) line.fail(b, "more than one axiom");
      seen_axiom_ = true;
      if (v >= end) line.fail(v, "empty axiom");
      buildAxiom(line, v, end);
    } else if (key == "maximum depth") {
      if (section_ == kProductions)
        line.fail(b, "'maximum depth:' belongs in a decomposition or homomorphism section");
      // The limits are enforced, not silent caps (issue 16): the recursion
      // beyond them would exhaust time or memory long before it ended.
      const bool homomorphism = section_ == kHomomorphism;
      table().max_depth = toInteger(line, v, expr_.evaluateConstantAll(line, v, end), 1,
                                    homomorphism ? kMaxHomomorphismDepth : kMaxDecompositionDepth,
                                    homomorphism ? "maximum depth of a homomorphism"
                                                 : "maximum depth of a decomposition");
    } else if (key == "ignore" || key == "consider") {
      parseSymbolSet(line, b, value, key == "ignore");
    } else if (key == "seed") {
      size_t e = trimEnd(t, v, end);
      uint64_t seed = 0;
      auto [ptr, ec] = std::from_chars(t.data() + v, t.data() + e, seed);
      if (ec != std::errc() || ptr != t.data() + e || v == e)
        line.fail(v, "seed must be an unsigned 64-bit integer");
      data_.seed = seed;
    } else {
      return applyViewDirective(key, line, value, expr_, data_.view);
    }
    return true;
  }

  void buildAxiom(const LogicalLine& line, size_t begin, size_t end) {
    ModuleString& axiom = data_.axiom;
    axiom.clear(true);
    for (const RawModule& m : scanModules(line, begin, end)) {
      axiom.symbols.push_back(m.symbol);
      for (auto [b, e] : m.params) axiom.params.push_back(expr_.evaluateConstantAll(line, b, e));
      if (!m.params.empty()) parametric_ = true;
      axiom.param_offsets.push_back(axiom.params.size());
    }
  }

  /// [begin, end) of the arrow `-->`, `->` or `→` outside parentheses.
  static std::pair<size_t, size_t> findArrow(const LogicalLine& line, size_t b) {
    const std::string& t = line.text;
    int depth = 0;
    for (size_t i = b; i < t.size(); ++i) {
      char c = t[i];
      if (c == '(') ++depth;
      else if (c == ')') depth = depth > 0 ? depth - 1 : 0;
      if (depth != 0) continue;
      if (c == '-' && i + 1 < t.size() && t[i + 1] == '>')
        return {i > b && t[i - 1] == '-' ? i - 1 : i, i + 2};
      if (t.compare(i, 3, "\xE2\x86\x92") == 0) return {i, i + 3};
    }
    return {std::string::npos, std::string::npos};
  }

  /// Pattern modules of a context or predecessor: appends their formal names.
  std::vector<RawModule> scanPattern(const LogicalLine& line, size_t begin, size_t end,
                                     const char* what, bool allow_brackets,
                                     std::vector<std::string>& formals,
                                     std::vector<size_t>& formal_pos) {
    const std::string& t = line.text;
    std::vector<RawModule> modules = scanModules(line, begin, end);
    for (const RawModule& m : modules) {
      char c = static_cast<char>(m.symbol);
      if (c == '<' || c == '>' || c == ':')
        line.fail(m.pos, std::string("unexpected '") + c + "' in " + what);
      if (c == '{') line.fail(m.pos, "cpfg pre-/post-condition blocks '{ ... }' are not supported");
      if (!allow_brackets && (c == '[' || c == ']'))
        line.fail(m.pos, std::string("brackets are not supported in ") + what);
      if ((c == '[' || c == ']') && !m.params.empty())
        line.fail(m.pos, "a bracket in a context cannot have parameters");
      for (auto [b, e] : m.params) {
        size_t p = skipSpace(t, b, e);
        size_t q = p;
        if (!isIdentStart(t[p])) line.fail(p, "expected a formal parameter name");
        while (q < e && isIdentChar(t[q])) ++q;
        if (skipSpace(t, q, e) < e) line.fail(skipSpace(t, q, e), "expected ',' or ')' after a formal parameter");
        std::string name = t.substr(p, q - p);
        for (const std::string& f : formals)
          if (f == name) line.fail(p, "formal parameter '" + name + "' appears twice in this production");
        if (expr_.globalIndex(name) >= 0)
          line.fail(p, "formal parameter '" + name + "' has the name of a #define");
        formals.push_back(name);
        formal_pos.push_back(p);
        if (formals.size() > PG_MAX_FORMALS)
          line.fail(p, "too many formal parameters (at most " + std::to_string(PG_MAX_FORMALS) +
                           " per production)");
      }
      if (!m.params.empty()) parametric_ = true;
    }
    return modules;
  }

  void parseProduction(const LogicalLine& line, size_t b) {
    const std::string& t = line.text;
    auto [arrow_begin, arrow_end] = findArrow(line, b);
    size_t left_end = arrow_begin;
    size_t colon = findTopLevel(t, b, left_end, ':');
    size_t pattern_end = colon == std::string::npos ? left_end : colon;

    // Split the left side into left context, strict predecessor, right context.
    size_t lt = findTopLevel(t, b, pattern_end, '<');
    size_t pred_begin = lt == std::string::npos ? b : lt + 1;
    size_t gt = findTopLevel(t, pred_begin, pattern_end, '>');
    size_t pred_end = gt == std::string::npos ? pattern_end : gt;

    std::vector<std::string> formals;
    std::vector<size_t> formal_pos;
    std::vector<RawModule> lc, pred, rc;
    if (lt != std::string::npos && !isStar(t, b, lt))
      lc = scanPattern(line, b, lt, "a left context", false, formals, formal_pos);
    size_t lc_formals = formals.size();
    pred = scanPattern(line, pred_begin, pred_end, "a predecessor", false, formals, formal_pos);
    if (pred.empty()) line.fail(skipSpace(t, pred_begin, pred_end), "missing predecessor module");
    if (pred.size() > 1)
      line.fail(pred[1].pos,
                "the strict predecessor must be a single module (write contexts with '<' and '>')");
    if (gt != std::string::npos && !isStar(t, gt + 1, pattern_end))
      rc = scanPattern(line, gt + 1, pattern_end, "a right context", true, formals, formal_pos);

    RuleTable& rules = table();
    PgProduction p{};
    p.predecessor = pred[0].symbol;
    p.pred_params = static_cast<int32_t>(pred[0].params.size());
    p.next = PG_NO_PRODUCTION;
    p.lc_begin = static_cast<int32_t>(rules.patterns.size());
    p.lc_count = static_cast<int32_t>(lc.size());
    for (const RawModule& m : lc)
      rules.patterns.push_back(PgPatternModule{m.symbol, static_cast<int32_t>(m.params.size())});
    p.rc_begin = static_cast<int32_t>(rules.patterns.size());
    p.rc_count = static_cast<int32_t>(rc.size());
    for (const RawModule& m : rc)
      rules.patterns.push_back(PgPatternModule{m.symbol, static_cast<int32_t>(m.params.size())});
    p.lc_formals = static_cast<int32_t>(lc_formals);
    p.num_formals = static_cast<int32_t>(formals.size());

    ExprScope scope;
    scope.formals = &formals;
    p.condition = -1;
    if (colon != std::string::npos) {
      size_t c = skipSpace(t, colon + 1, left_end);
      if (c >= left_end) line.fail(c, "expected a condition after ':' (or '*' for none)");
      if (findTopLevel(t, c, left_end, '{') != std::string::npos)
        line.fail(findTopLevel(t, c, left_end, '{'),
                  "cpfg pre-/post-condition blocks '{ ... }' are not supported");
      if (!isStar(t, c, left_end)) {
        ExprScope cond = scope;
        cond.allow_single_eq = true;
        p.condition = expr_.compileAll(line, c, trimEnd(t, c, left_end), cond);
      }
    }

    // Successor and optional probability.
    size_t succ_end = findTopLevel(t, arrow_end, t.size(), ':');
    size_t prob_begin = std::string::npos;
    if (succ_end == std::string::npos) {
      succ_end = t.size();
    } else {
      prob_begin = succ_end + 1;
    }
    // A trailing ';' is accepted (C habit); cpfg itself does not use it.
    size_t tail = trimEnd(t, arrow_end, t.size());
    if (prob_begin == std::string::npos && tail > arrow_end && t[tail - 1] == ';') succ_end = tail - 1;
    p.succ_begin = static_cast<int32_t>(rules.successors.size());
    int32_t succ_params = 0;
    if (!isStar(t, arrow_end, succ_end)) {
      for (const RawModule& m : scanModules(line, arrow_end, succ_end)) {
        PgSuccessorModule s{};
        s.symbol = m.symbol;
        s.num_params = static_cast<int32_t>(m.params.size());
        s.first_expr = static_cast<int32_t>(rules.successor_exprs.size());
        for (auto [pb, pe] : m.params)
          rules.successor_exprs.push_back(expr_.compileAll(line, pb, pe, scope));
        succ_params += s.num_params;
        if (s.num_params) parametric_ = true;
        rules.successors.push_back(s);
      }
    }
    p.succ_count = static_cast<int32_t>(rules.successors.size()) - p.succ_begin;
    p.succ_params = succ_params;

    p.probability = PG_NOT_STOCHASTIC;
    if (prob_begin != std::string::npos) {
      size_t pe = trimEnd(t, prob_begin, t.size());
      if (pe > prob_begin && t[pe - 1] == ';') pe = trimEnd(t, prob_begin, pe - 1);
      size_t pb = skipSpace(t, prob_begin, pe);
      if (pb >= pe) line.fail(pb, "expected a probability after ':'");
      float weight = expr_.evaluateConstantAll(line, pb, pe);
      if (!(weight >= 0.0f) || !std::isfinite(weight))
        line.fail(pb, "probability must be a finite number >= 0");
      p.probability = weight;
    }
    p.line = line.lineAt(b);
    p.reserved = 0;

    auto index = static_cast<int32_t>(rules.productions.size());
    int32_t& last = last_[section_][p.predecessor];
    if (last == PG_NO_PRODUCTION) {
      rules.first_by_symbol[p.predecessor] = index;
    } else {
      rules.productions[last].next = index;
    }
    last = index;
    rules.productions.push_back(p);
  }

  void finish() {
    if (!seen_axiom_) {
      int last_line = 1;
      for (char c : source_.text())
        if (c == '\n') ++last_line;
      source_.fail(last_line, 1, "missing 'Axiom:'");
    }
    if (symbol_mode_ == 1) data_.ignored = symbol_set_;
    if (symbol_mode_ == 2)
      for (size_t c = 0; c < PG_SYMBOL_COUNT; ++c) data_.ignored[c] = symbol_set_[c] ? 0 : 1;
    data_.parametric = parametric_;
    if (!parametric_) data_.axiom.param_offsets.clear();
  }

  const SourceText& source_;
  LSystemData& data_;
  ExprCompiler expr_;
  Section section_ = kProductions;
  bool seen_lsystem_ = false;
  bool seen_end_ = false;
  bool seen_axiom_ = false;
  bool parametric_ = false;
  int symbol_mode_ = 0;  // 0 none, 1 #ignore, 2 #consider
  std::array<uint8_t, PG_SYMBOL_COUNT> symbol_set_{};
  std::array<std::array<int32_t, PG_SYMBOL_COUNT>, 3> last_;
};

}  // namespace
}  // namespace detail

LSystem LSystem::fromText(std::string_view text, const std::string& filename) {
  auto data = std::make_shared<detail::LSystemData>();
  data->source_file = filename;
  data->name = filename == "<input>" ? filename : std::filesystem::path(filename).stem().string();
  if (data->name.empty()) data->name = "<input>";
  detail::SourceText source(text, filename);
  detail::Parser parser(source, *data);
  parser.run();
  return LSystem(std::move(data));
}

LSystem LSystem::fromFile(const std::filesystem::path& path) {
  return fromText(readInputFile(path, "L-system file"), path.string());
}

const std::string& LSystem::name() const { return data_->name; }
int LSystem::derivationLength() const { return data_->derivation_length; }
const ViewSettings& LSystem::view() const { return data_->view; }
const ModuleString& LSystem::axiom() const { return data_->axiom; }
bool LSystem::parametric() const { return data_->parametric; }
std::optional<uint64_t> LSystem::seed() const { return data_->seed; }

void applyViewFile(std::string_view text, const std::string& filename, ViewSettings& view) {
  detail::SourceText source(text, filename);
  detail::LSystemData scratch;
  detail::ExprCompiler expr(scratch);
  ViewSettings result = view;  // all or nothing: a bad file leaves `view` untouched
  for (const detail::LogicalLine& line : detail::splitLogicalLines(source)) {
    size_t b = detail::skipSpace(line.text, 0, line.text.size());
    std::string key;
    size_t value = 0;
    if (detail::splitKey(line, b, key, value))
      detail::applyViewDirective(key, line, value, expr, result);
  }
  view = result;
}

ModuleString parseModuleString(std::string_view text, bool parametric) {
  detail::SourceText source(text, "<string>");
  detail::LogicalLine line = detail::wholeTextLine(source);
  detail::LSystemData scratch;
  detail::ExprCompiler expr(scratch);
  ModuleString out;
  out.clear(true);
  bool any_params = false;
  for (const detail::RawModule& m : detail::scanModules(line, 0, line.text.size())) {
    out.symbols.push_back(m.symbol);
    for (auto [b, e] : m.params) {
      // toText() writes non-finite parameters as std::to_chars does; read them back.
      size_t tb = detail::skipSpace(line.text, b, e);
      std::string word = line.text.substr(tb, detail::trimEnd(line.text, tb, e) - tb);
      if (word == "inf" || word == "-inf" || word == "nan" || word == "-nan") {
        float v = word.back() == 'f' ? std::numeric_limits<float>::infinity()
                                     : std::numeric_limits<float>::quiet_NaN();
        out.params.push_back(word[0] == '-' ? -v : v);
        continue;
      }
      out.params.push_back(expr.evaluateConstantAll(line, b, e));
    }
    any_params = any_params || !m.params.empty();
    out.param_offsets.push_back(out.params.size());
  }
  if (!parametric && !any_params) out.param_offsets.clear();
  return out;
}

}  // namespace procgen
