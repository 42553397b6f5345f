// Expression compiler (src/lsystem/expr_compiler.cpp): every expression is
// compiled, run through the kernel evaluator pgEval, and compared with the same
// arithmetic written directly in C++ in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lsystem/expr.h"
#include "lsystem/expr_compiler.hpp"
#include "lsystem/lsystem_data.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::detail {
namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

float eval(const std::string& text, const std::vector<std::string>& names = {},
           const std::vector<float>& slots = {}, bool condition = false, uint64_t position = 0) {
  LSystemData data;
  int32_t offset = compileExpression(data, text, names, condition);
  EXPECT_EQ(data.code.back() & 0xffu, static_cast<uint32_t>(PG_OP_END));
  PgRules rules = data.rules(data.productions);
  PgRandomStream rng{};
  rng.seed = 12345;
  rng.position = position;
  return pgEval(&rules, offset, slots.data(), &rng);
}

void expectError(const std::string& text, int column, const std::string& message,
                 bool condition = false, const std::vector<std::string>& names = {}) {
  LSystemData data;
  try {
    compileExpression(data, text, names, condition);
    ADD_FAILURE() << "no error for: " << text.substr(0, 80);
  } catch (const ParseError& e) {
    EXPECT_EQ(e.location().line, 1) << text.substr(0, 80);
    EXPECT_EQ(e.location().column, column) << text.substr(0, 80);
    EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
  }
}

TEST(ExprCompiler, ArithmeticPrecedenceAndAssociativity) {
  EXPECT_EQ(eval("1+2*3"), 1 + 2 * 3);
  EXPECT_EQ(eval("(1+2)*3"), (1 + 2) * 3);
  EXPECT_EQ(eval("10-4-3"), (10 - 4) - 3);
  EXPECT_EQ(eval("64/4/2"), (64.0f / 4.0f) / 2.0f);
  EXPECT_EQ(eval("2^3^2"), std::pow(2.0f, 9.0f));  // right-associative: 2^(3^2)
  EXPECT_EQ(eval("-2^2"), -4.0f);                  // ^ binds tighter than unary minus
  EXPECT_EQ(eval("2^-1"), 0.5f);
  EXPECT_EQ(eval("2*3^2"), 18.0f);
  EXPECT_EQ(eval("--3"), 3.0f);
  EXPECT_EQ(eval("-3+ +5"), 2.0f);
  EXPECT_EQ(eval("7%3"), 1.0f);
  EXPECT_EQ(eval("-1%3"), 2.0f);  // floored modulo: -1 - 3*floor(-1/3)
  EXPECT_EQ(eval(" 1.5e1 + .25 + 2. "), 15.0f + 0.25f + 2.0f);
}

TEST(ExprCompiler, ComparisonsAndLogic) {
  const float a = 2, b = 3;
  const std::vector<std::string> names{"a", "b"};
  const std::vector<float> slots{a, b};
  EXPECT_EQ(eval("a<b", names, slots), a < b ? 1.0f : 0.0f);
  EXPECT_EQ(eval("a<=b", names, slots), a <= b ? 1.0f : 0.0f);
  EXPECT_EQ(eval("a>b", names, slots), a > b ? 1.0f : 0.0f);
  EXPECT_EQ(eval("a>=a", names, slots), 1.0f);
  EXPECT_EQ(eval("a==b", names, slots), 0.0f);
  EXPECT_EQ(eval("a!=b", names, slots), 1.0f);
  EXPECT_EQ(eval("1+1<3", names, slots), 1.0f);       // + before <
  EXPECT_EQ(eval("1 || 0 && 0"), 1.0f);               // && before ||
  EXPECT_EQ(eval("(1 || 0) && 0"), 0.0f);
  EXPECT_EQ(eval("!0"), 1.0f);
  EXPECT_EQ(eval("!(a<b)", names, slots), 0.0f);
  EXPECT_EQ(eval("a<b == b>a", names, slots), 1.0f);  // relational before equality
}

TEST(ExprCompiler, SingleEqualsIsEqualityOnlyInConditions) {
  EXPECT_EQ(eval("x=2", {"x"}, {2.0f}, true), 1.0f);
  EXPECT_EQ(eval("x = 3 && x >= 2", {"x"}, {2.0f}, true), 0.0f);
  expectError("x=2", 2, "only allowed in conditions", false, {"x"});
}

TEST(ExprCompiler, Conditional) {
  EXPECT_EQ(eval("1?2:3"), 2.0f);
  EXPECT_EQ(eval("0?2:3"), 3.0f);
  EXPECT_EQ(eval("0?1:0?2:3"), 3.0f);  // right-associative
  EXPECT_EQ(eval("1?0?5:6:7"), 6.0f);
  for (float x : {-2.0f, 0.5f, 4.0f})
    EXPECT_EQ(eval("x>1 ? x*2 : -x", {"x"}, {x}), x > 1 ? x * 2 : -x);
  EXPECT_EQ(eval("(1?2:3)+(0?4:5)*10"), 52.0f);
}

TEST(ExprCompiler, FunctionsUseDegrees) {
  auto near = [](const std::string& text, double expected) {
    EXPECT_NEAR(eval(text), expected, 1e-5 * (1 + std::fabs(expected))) << text;
  };
  near("sin(30)", std::sin(30 * kDeg));
  near("cos(60)", std::cos(60 * kDeg));
  near("tan(45)", std::tan(45 * kDeg));
  near("asin(0.5)", std::asin(0.5) / kDeg);
  near("acos(0.5)", std::acos(0.5) / kDeg);
  near("atan(1)", std::atan(1.0) / kDeg);
  near("atan2(1, -1)", std::atan2(1.0, -1.0) / kDeg);
  near("sqrt(2)", std::sqrt(2.0));
  near("exp(1.5)", std::exp(1.5));
  near("log(10)", std::log(10.0));
  near("floor(-2.5)", -3);
  near("ceil(-2.5)", -2);
  near("abs(-7.25)", 7.25);
  near("min(3, -4)", -4);
  near("max(3, -4)", 3);
  near("pow(2, 10)", 1024);
  near("trunc(-2.7)", -2);
  near("trunc(2.7)", 2);
  EXPECT_NEAR(eval("sin(x)*2", {"x"}, {30.0f}), 2 * std::sin(30 * kDeg), 1e-5);
}

TEST(ExprCompiler, RanIsUniformInRange) {
  const int n = 2000;
  double sum = 0;
  float lo = 1e9f, hi = -1e9f;
  for (int i = 0; i < n; ++i) {
    float v = eval("ran(5)", {}, {}, false, static_cast<uint64_t>(i));
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 5.0f);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // Mean of U[0,5) is 2.5 with standard error 5/sqrt(12 n) ~ 0.03.
  EXPECT_NEAR(sum / n, 2.5, 0.2);
  EXPECT_LT(lo, 0.5f);
  EXPECT_GT(hi, 4.5f);
}

TEST(ExprCompiler, FormalsAndGlobals) {
  LSystem l = LSystem::fromText("#define A 2\n#define B A*A+1\n#define C -B^2\nAxiom: X\n");
  ASSERT_EQ(l.data().globals.size(), 3u);
  EXPECT_EQ(l.data().global_names[1], "B");
  EXPECT_EQ(l.data().globals[0], 2.0f);
  EXPECT_EQ(l.data().globals[1], 5.0f);
  EXPECT_EQ(l.data().globals[2], -25.0f);
  EXPECT_EQ(eval("b*10+a", {"a", "b"}, {3.0f, 4.0f}), 43.0f);
}

TEST(ExprCompiler, StackDepthIsBounded) {
  // "1+(1+(1+...))" with n ones needs exactly n stack entries.
  auto chain = [](int n) {
    std::string s;
    for (int i = 1; i < n; ++i) s += "1+(";
    s += "1";
    s += std::string(n - 1, ')');
    return s;
  };
  EXPECT_EQ(eval(chain(PG_MAX_EXPR_STACK)), static_cast<float>(PG_MAX_EXPR_STACK));
  expectError(chain(PG_MAX_EXPR_STACK + 1), 1, "expression too complex");
  // A long left-associative sum needs only two entries.
  std::string flat = "1";
  for (int i = 0; i < 500; ++i) flat += "+1";
  EXPECT_EQ(eval(flat), 501.0f);
  // The two ?: branches share depth: 16 nested conditionals fit.
  std::string cond;
  for (int i = 0; i < 16; ++i) cond += "1?";
  cond += "7";
  for (int i = 0; i < 16; ++i) cond += ":0";
  EXPECT_EQ(eval(cond), 7.0f);
}

TEST(ExprCompiler, DeepNestingIsAnErrorNotACrash) {
  // The limit counts ?:-levels and unary levels: each '(' costs two (expression +
  // operand), each '-' one, each "1?1:" else-branch one; 100 levels are allowed.
  // In the ?: chain the k-th else branch sits at level k+1 and the operand of
  // its then-branch at k+3, so level 101 is reached inside the 98th else
  // branch, at its then-branch (0-based byte 4*98+2 = 394).
  expectError(std::string(100000, '(') + "1" + std::string(100000, ')'), 51, "nested too deeply");
  expectError(std::string(100000, '-') + "1", 100, "nested too deeply");
  std::string cond;
  for (int i = 0; i < 100000; ++i) cond += "1?1:";
  expectError(cond + "1", 395, "nested too deeply");
}

TEST(ExprCompiler, Errors) {
  expectError("sin(1,2)", 1, "function 'sin' takes 1 argument, got 2");
  expectError("1 + max(1)", 5, "function 'max' takes 2 arguments, got 1");
  expectError("foo(1)", 1, "unknown function 'foo'");
  expectError("x + y", 5, "unknown name 'y'", false, {"x"});
  expectError("(1+2", 5, "expected ')'");
  expectError("1+2)", 4, "unbalanced ')'");
  expectError("1 +", 4, "unexpected end of expression");
  expectError("1 2", 3, "unexpected '2'");
  expectError("1e50", 1, "out of range");
  expectError("sin", 1, "needs '(' arguments ')'");
  expectError("", 1, "expected an expression");
  expectError("1 ? 2", 6, "expected ':'");
  expectError("2 # 3", 3, "unexpected '#'");
}

}  // namespace
}  // namespace procgen::detail
