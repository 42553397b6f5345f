// Expression compiler: cpfg/ABOP arithmetic -> expr.h postfix bytecode.
// Paper §4.1 (parameters become numeric IDs) and §4.2 (a simple expression
// evaluator inside the derivation kernel). Stages: recursive descent by
// precedence level emitting postfix directly; ?: becomes JUMP_IF_ZERO/JUMP
// with patched absolute targets; the evaluation stack depth is tracked while
// emitting so that pgEval's fixed stack is provably large enough.
#include "lsystem/expr_compiler.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include "lsystem/expr.h"

namespace procgen::detail {

namespace {

struct Function {
  const char* name;
  PgOp op;
  int arity;
};

constexpr Function kFunctions[] = {
    {"sin", PG_OP_SIN, 1},     {"cos", PG_OP_COS, 1},     {"tan", PG_OP_TAN, 1},
    {"asin", PG_OP_ASIN, 1},   {"acos", PG_OP_ACOS, 1},   {"atan", PG_OP_ATAN, 1},
    {"atan2", PG_OP_ATAN2, 2}, {"sqrt", PG_OP_SQRT, 1},   {"exp", PG_OP_EXP, 1},
    {"log", PG_OP_LOG, 1},     {"floor", PG_OP_FLOOR, 1}, {"ceil", PG_OP_CEIL, 1},
    {"abs", PG_OP_ABS, 1},     {"min", PG_OP_MIN, 2},     {"max", PG_OP_MAX, 2},
    {"pow", PG_OP_POW, 2},     {"ran", PG_OP_RAN, 1},     {"trunc", PG_OP_TRUNC, 1},
};

const Function* findFunction(const std::string& name) {
  for (const Function& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

struct ExprCompiler::State {
  const LogicalLine& line;
  size_t pos;
  size_t end;
  const ExprScope& scope;
  size_t start;
  int nesting = 0;
  int stack = 0;
  int max_stack = 0;

  char peek(size_t ahead = 0) const { return pos + ahead < end ? line.text[pos + ahead] : '\0'; }
  void skipSpace() {
    while (pos < end && isSpace(line.text[pos])) ++pos;
  }
  /// Consumes `token` (after spaces) if it is next.
  bool accept(const char* token) {
    skipSpace();
    size_t n = std::strlen(token);
    if (pos + n > end || line.text.compare(pos, n, token) != 0) return false;
    pos += n;
    return true;
  }
  [[noreturn]] void fail(const std::string& message) const { line.fail(pos, message); }
};

// Keeps recursion bounded: every recursive path passes through parseTernary or parseUnary.
class NestingGuard {
 public:
  explicit NestingGuard(ExprCompiler::State& s) : s_(s) {
    if (++s_.nesting > ExprCompiler::kMaxNesting) s_.fail("expression nested too deeply");
  }
  ~NestingGuard() { --s_.nesting; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

 private:
  ExprCompiler::State& s_;
};

bool ExprCompiler::isFunctionName(const std::string& name) { return findFunction(name) != nullptr; }

int ExprCompiler::globalIndex(const std::string& name) const {
  if (global_index_.empty() && !data_.global_names.empty()) {
    for (size_t i = 0; i < data_.global_names.size(); ++i)
      if (data_.global_names[i] == name) return static_cast<int>(i);
    return -1;
  }
  auto it = global_index_.find(name);
  return it == global_index_.end() ? -1 : it->second;
}

void ExprCompiler::defineGlobal(const std::string& name, float value) {
  if (global_index_.empty())
    for (size_t i = 0; i < data_.global_names.size(); ++i)
      global_index_.emplace(data_.global_names[i], static_cast<int>(i));
  global_index_.emplace(name, static_cast<int>(data_.globals.size()));
  data_.globals.push_back(value);
  data_.global_names.push_back(name);
}

uint32_t ExprCompiler::constantIndex(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  auto it = constant_index_.find(bits);
  if (it != constant_index_.end()) return it->second;
  auto index = static_cast<uint32_t>(data_.constants.size());
  data_.constants.push_back(value);
  constant_index_.emplace(bits, index);
  return index;
}

void ExprCompiler::emit(State& s, uint32_t op, uint32_t arg) {
  if (data_.code.size() >= PG_OP_ARG_MAX || arg > PG_OP_ARG_MAX)
    s.line.fail(s.start, "L-system too large (expression bytecode exceeds 2^24 instructions)");
  data_.code.push_back(PG_ENCODE(op, arg));
  switch (op) {
    case PG_OP_CONST:
    case PG_OP_FORMAL:
    case PG_OP_GLOBAL:
      ++s.stack;
      break;
    case PG_OP_JUMP_IF_ZERO:
      --s.stack;
      break;
    case PG_OP_END:
    case PG_OP_JUMP:
      break;
    default:
      if (op >= PG_OP_ADD) --s.stack;  // binary operators pop two, push one
      break;
  }
  if (s.stack > s.max_stack) s.max_stack = s.stack;
  if (s.max_stack > PG_MAX_EXPR_STACK)
    s.line.fail(s.start, "expression too complex (needs more than " +
                             std::to_string(PG_MAX_EXPR_STACK) + " stack entries)");
}

int32_t ExprCompiler::compile(const LogicalLine& line, size_t& pos, size_t end,
                              const ExprScope& scope) {
  State s{line, pos, end, scope, pos};
  s.skipSpace();
  s.start = s.pos;
  if (s.pos >= end) s.fail("expected an expression");
  auto offset = static_cast<int32_t>(data_.code.size());
  parseTernary(s);
  emit(s, PG_OP_END, 0);
  s.skipSpace();
  pos = s.pos;
  return offset;
}

int32_t ExprCompiler::compileAll(const LogicalLine& line, size_t pos, size_t end,
                                 const ExprScope& scope) {
  int32_t offset = compile(line, pos, end, scope);
  if (pos < end) {
    char c = line.text[pos];
    line.fail(pos, c == ')' ? std::string("unbalanced ')'")
                            : "unexpected '" + std::string(1, c) + "' in expression");
  }
  return offset;
}

float ExprCompiler::evaluate(int32_t offset) const {
  PgRules rules = data_.rules(data_.productions);
  PgRandomStream rng{};
  return pgEval(&rules, offset, nullptr, &rng);
}

float ExprCompiler::evaluateConstant(const LogicalLine& line, size_t& pos, size_t end) {
  ExprScope scope;
  scope.constant = true;
  size_t code_size = data_.code.size();
  const size_t start = pos;
  int32_t offset = compile(line, pos, end, scope);
  float value = evaluate(offset);
  data_.code.resize(code_size);
  // Constants reach the turtle, the geometry and the outputs as they are: a
  // NaN width once made the SVG writer loop (issue 16), so every constant
  // (axiom parameters, view settings, #define) must be a finite number.
  if (!std::isfinite(value))
    line.fail(start, std::string("the value is not a finite number (") +
                         (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") + ")");
  return value;
}

float ExprCompiler::evaluateConstantAll(const LogicalLine& line, size_t pos, size_t end) {
  float value = evaluateConstant(line, pos, end);
  if (pos < end) line.fail(pos, "unexpected '" + std::string(1, line.text[pos]) + "' after value");
  return value;
}

void ExprCompiler::parseTernary(State& s) {
  NestingGuard guard(s);
  parseOr(s);
  if (!s.accept("?")) return;
  size_t jz = data_.code.size();
  emit(s, PG_OP_JUMP_IF_ZERO, 0);
  int depth_before = s.stack;
  parseTernary(s);
  s.skipSpace();
  if (s.peek() != ':') s.fail("expected ':' of '?:'");
  ++s.pos;
  size_t jump = data_.code.size();
  emit(s, PG_OP_JUMP, 0);
  s.stack = depth_before;  // the else branch starts where the then branch did
  data_.code[jz] = PG_ENCODE(PG_OP_JUMP_IF_ZERO, static_cast<uint32_t>(data_.code.size()));
  parseTernary(s);
  data_.code[jump] = PG_ENCODE(PG_OP_JUMP, static_cast<uint32_t>(data_.code.size()));
}

void ExprCompiler::parseOr(State& s) {
  parseAnd(s);
  while (s.accept("||")) {
    parseAnd(s);
    emit(s, PG_OP_OR, 0);
  }
}

void ExprCompiler::parseAnd(State& s) {
  parseEquality(s);
  while (s.accept("&&")) {
    parseEquality(s);
    emit(s, PG_OP_AND, 0);
  }
}

void ExprCompiler::parseEquality(State& s) {
  parseRelational(s);
  for (;;) {
    if (s.accept("==")) {
      parseRelational(s);
      emit(s, PG_OP_EQ, 0);
    } else if (s.accept("!=")) {
      parseRelational(s);
      emit(s, PG_OP_NE, 0);
    } else if (s.skipSpace(), s.peek() == '=') {
      if (!s.scope.allow_single_eq) s.fail("'=' is only allowed in conditions; use '=='");
      ++s.pos;
      parseRelational(s);
      emit(s, PG_OP_EQ, 0);
    } else {
      return;
    }
  }
}

void ExprCompiler::parseRelational(State& s) {
  parseAdditive(s);
  for (;;) {
    PgOp op;
    if (s.accept("<="))
      op = PG_OP_LE;
    else if (s.accept(">="))
      op = PG_OP_GE;
    else if (s.accept("<"))
      op = PG_OP_LT;
    else if (s.accept(">"))
      op = PG_OP_GT;
    else
      return;
    parseAdditive(s);
    emit(s, op, 0);
  }
}

void ExprCompiler::parseAdditive(State& s) {
  parseMultiplicative(s);
  for (;;) {
    PgOp op;
    if (s.accept("+"))
      op = PG_OP_ADD;
    else if (s.accept("-"))
      op = PG_OP_SUB;
    else
      return;
    parseMultiplicative(s);
    emit(s, op, 0);
  }
}

void ExprCompiler::parseMultiplicative(State& s) {
  parseUnary(s);
  for (;;) {
    PgOp op;
    if (s.accept("*"))
      op = PG_OP_MUL;
    else if (s.accept("/"))
      op = PG_OP_DIV;
    else if (s.accept("%"))
      op = PG_OP_MOD;
    else
      return;
    parseUnary(s);
    emit(s, op, 0);
  }
}

void ExprCompiler::parseUnary(State& s) {
  NestingGuard guard(s);
  s.skipSpace();
  if (s.peek() == '-') {
    ++s.pos;
    parseUnary(s);
    emit(s, PG_OP_NEG, 0);
  } else if (s.peek() == '+') {
    ++s.pos;
    parseUnary(s);
  } else if (s.peek() == '!' && s.peek(1) != '=') {
    ++s.pos;
    parseUnary(s);
    emit(s, PG_OP_NOT, 0);
  } else {
    parsePower(s);
  }
}

// `^` binds tighter than unary minus (-2^2 == -4) and is right-associative;
// its right operand may carry a sign (2^-1).
void ExprCompiler::parsePower(State& s) {
  parsePrimary(s);
  if (s.accept("^")) {
    parseUnary(s);
    emit(s, PG_OP_POW, 0);
  }
}

void ExprCompiler::parsePrimary(State& s) {
  s.skipSpace();
  char c = s.peek();
  if (isDigit(c) || (c == '.' && isDigit(s.peek(1)))) {
    parseNumber(s);
  } else if (isIdentStart(c)) {
    parseName(s);
  } else if (c == '(') {
    ++s.pos;
    parseTernary(s);
    s.skipSpace();
    if (s.peek() != ')') s.fail("expected ')'");
    ++s.pos;
  } else if (c == '\0') {
    s.fail("unexpected end of expression");
  } else {
    s.fail("unexpected '" + std::string(1, c) + "' in expression");
  }
}

void ExprCompiler::parseNumber(State& s) {
  size_t begin = s.pos;
  while (isDigit(s.peek())) ++s.pos;
  if (s.peek() == '.') {
    ++s.pos;
    while (isDigit(s.peek())) ++s.pos;
  }
  if (s.peek() == 'e' || s.peek() == 'E') {
    size_t k = 1;
    if (s.peek(1) == '+' || s.peek(1) == '-') k = 2;
    if (isDigit(s.peek(k))) {
      s.pos += k;
      while (isDigit(s.peek())) ++s.pos;
    }
  }
  float value = 0.0f;
  const char* first = s.line.text.data() + begin;
  const char* last = s.line.text.data() + s.pos;
  auto [ptr, ec] = std::from_chars(first, last, value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && !std::isfinite(value)))
    s.line.fail(begin, "number out of range for a 32-bit float");
  if (ec != std::errc() || ptr != last) s.line.fail(begin, "malformed number");
  emit(s, PG_OP_CONST, constantIndex(value));
}

void ExprCompiler::parseName(State& s) {
  size_t begin = s.pos;
  while (isIdentChar(s.peek())) ++s.pos;
  std::string name = s.line.text.substr(begin, s.pos - begin);
  size_t after = s.pos;
  s.skipSpace();
  if (s.peek() == '(') {
    const Function* f = findFunction(name);
    if (!f) s.line.fail(begin, "unknown function '" + name + "'");
    if (f->op == PG_OP_RAN && s.scope.constant)
      s.line.fail(begin, "ran() cannot be used in a constant expression");
    ++s.pos;
    int args = 0;
    s.skipSpace();
    if (s.peek() != ')') {
      for (;;) {
        parseTernary(s);
        ++args;
        if (!s.accept(",")) break;
      }
    }
    s.skipSpace();
    if (s.peek() != ')') s.fail("expected ',' or ')' in the arguments of " + name + "()");
    ++s.pos;
    if (args != f->arity)
      s.line.fail(begin, "function '" + name + "' takes " + std::to_string(f->arity) +
                             (f->arity == 1 ? " argument, got " : " arguments, got ") +
                             std::to_string(args));
    emit(s, f->op, 0);
    return;
  }
  s.pos = after;
  if (s.scope.formals && !s.scope.constant) {
    const std::vector<std::string>& formals = *s.scope.formals;
    for (size_t i = 0; i < formals.size(); ++i) {
      if (formals[i] == name) {
        emit(s, PG_OP_FORMAL, static_cast<uint32_t>(i));
        return;
      }
    }
  }
  int global = globalIndex(name);
  if (global >= 0) {
    emit(s, PG_OP_GLOBAL, static_cast<uint32_t>(global));
    return;
  }
  if (findFunction(name)) s.line.fail(begin, "function '" + name + "' needs '(' arguments ')'");
  s.line.fail(begin, s.scope.constant
                         ? "unknown constant '" + name + "' (not a #define)"
                         : "unknown name '" + name + "' (not a formal parameter or #define)");
}

int32_t compileExpression(LSystemData& data, std::string_view text,
                          const std::vector<std::string>& formals, bool condition) {
  SourceText source(text, "<expression>");
  LogicalLine line = wholeTextLine(source);
  ExprCompiler compiler(data);
  ExprScope scope;
  scope.formals = &formals;
  scope.allow_single_eq = condition;
  return compiler.compileAll(line, 0, line.text.size(), scope);
}

}  // namespace procgen::detail
