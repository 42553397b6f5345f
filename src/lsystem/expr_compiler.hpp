// Compiles the arithmetic of L-system files (conditions, successor parameters,
// probabilities, #define values) to the postfix bytecode of expr.h.
//
// Paper §4.1/§4.2: parameters are translated to numeric slot IDs once, so the
// per-module evaluation in the derivation kernel is a flat stack machine with
// O(1) parameter lookup. Recursive descent here, with an explicit nesting limit
// so hostile input cannot exhaust the C++ stack, and an exact stack-depth
// count so pgEval's fixed stack can never overflow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lsystem/lexer.hpp"
#include "lsystem/lsystem_data.hpp"

namespace procgen::detail {

/// What names and operators an expression may use.
struct ExprScope {
  const std::vector<std::string>* formals = nullptr;  ///< slot i is named (*formals)[i]
  bool constant = false;        ///< evaluated at compile time: no formals, no ran()
  bool allow_single_eq = false; ///< ABOP's `=` as equality (conditions only)
};

class ExprCompiler {
 public:
  static constexpr int kMaxNesting = 100;  ///< parentheses / unary operators / ?: levels

  explicit ExprCompiler(LSystemData& data) : data_(data) {}

  /// Parses one expression of `line.text[pos, end)` starting at `pos` and
  /// appends its bytecode (terminated by PG_OP_END). Stops before the first
  /// byte that cannot continue the expression (',' ')' or end); `pos` is left
  /// there with spaces skipped. Returns the bytecode offset. Throws ParseError.
  int32_t compile(const LogicalLine& line, size_t& pos, size_t end, const ExprScope& scope);
  /// As compile(), but the expression must fill [pos, end).
  int32_t compileAll(const LogicalLine& line, size_t pos, size_t end, const ExprScope& scope);
  /// Compiles a constant expression, evaluates it and drops its bytecode.
  float evaluateConstant(const LogicalLine& line, size_t& pos, size_t end);
  float evaluateConstantAll(const LogicalLine& line, size_t pos, size_t end);
  /// Evaluates constant bytecode at `offset` (no formals, no ran()).
  float evaluate(int32_t offset) const;

  /// Index of a #define, or -1.
  int globalIndex(const std::string& name) const;
  /// Appends a #define (the caller checked that the name is new).
  void defineGlobal(const std::string& name, float value);
  static bool isFunctionName(const std::string& name);

  struct State;  // parse state of one expression (expr_compiler.cpp)

 private:
  void emit(State& s, uint32_t op, uint32_t arg);
  uint32_t constantIndex(float value);
  void parseTernary(State& s);
  void parseOr(State& s);
  void parseAnd(State& s);
  void parseEquality(State& s);
  void parseRelational(State& s);
  void parseAdditive(State& s);
  void parseMultiplicative(State& s);
  void parseUnary(State& s);
  void parsePower(State& s);
  void parsePrimary(State& s);
  void parseNumber(State& s);
  void parseName(State& s);

  LSystemData& data_;
  std::unordered_map<uint32_t, uint32_t> constant_index_;  // float bits -> constants index
  std::unordered_map<std::string, int> global_index_;
};

/// Test and tool helper: compiles `text` as one expression whose formal slots
/// are `formals`; returns the bytecode offset in data.code. Throws ParseError.
int32_t compileExpression(LSystemData& data, std::string_view text,
                          const std::vector<std::string>& formals = {}, bool condition = false);

}  // namespace procgen::detail
