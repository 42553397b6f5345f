// The L-system front end (src/lsystem/parser.cpp): table contents for small
// hand-written grammars, checked against the layout of tables.h worked out by
// hand, and every diagnostic with its message and file:line:col.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lsystem/expr.h"
#include "lsystem/lsystem_data.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

using detail::LSystemData;
using detail::RuleTable;

float evalAt(const LSystemData& d, int32_t offset, const std::vector<float>& slots = {}) {
  PgRules rules = d.rules(d.productions);
  PgRandomStream rng{};
  return pgEval(&rules, offset, slots.data(), &rng);
}

/// Values of successor module `m` (index into table.successors) for `slots`.
std::vector<float> succParams(const LSystemData& d, const RuleTable& t, int m,
                              const std::vector<float>& slots) {
  std::vector<float> out;
  const PgSuccessorModule& s = t.successors[m];
  for (int j = 0; j < s.num_params; ++j) out.push_back(evalAt(d, t.successor_exprs[s.first_expr + j], slots));
  return out;
}

std::string succSymbols(const RuleTable& t, const PgProduction& p) {
  std::string s;
  for (int i = 0; i < p.succ_count; ++i) s += static_cast<char>(t.successors[p.succ_begin + i].symbol);
  return s;
}

std::string patternSymbols(const RuleTable& t, int begin, int count) {
  std::string s;
  for (int i = 0; i < count; ++i) s += static_cast<char>(t.patterns[begin + i].symbol);
  return s;
}

void expectError(const std::string& text, int line, int column, const std::string& message) {
  try {
    LSystem::fromText(text, "test.l");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.location().file, "test.l");
    EXPECT_EQ(e.location().line, line) << e.what();
    EXPECT_EQ(e.location().column, column) << e.what();
    EXPECT_NE(e.message().find(message), std::string::npos) << e.what();
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
  }
}

TEST(Parser, ChainsKeepFileOrder) {
  LSystem l = LSystem::fromText("Axiom: A\nA --> B\nC --> D\nA(x) --> E\nA --> F\n");
  const RuleTable& t = l.data().productions;
  ASSERT_EQ(t.productions.size(), 4u);
  EXPECT_EQ(t.first_by_symbol['A'], 0);
  EXPECT_EQ(t.first_by_symbol['C'], 1);
  EXPECT_EQ(t.first_by_symbol['B'], PG_NO_PRODUCTION);
  EXPECT_EQ(t.productions[0].next, 2);
  EXPECT_EQ(t.productions[2].next, 3);
  EXPECT_EQ(t.productions[3].next, PG_NO_PRODUCTION);
  EXPECT_EQ(t.productions[1].next, PG_NO_PRODUCTION);
  EXPECT_EQ(t.productions[2].pred_params, 1);
  EXPECT_EQ(succSymbols(t, t.productions[3]), "F");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.productions[i].line, i + 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.productions[i].probability, PG_NOT_STOCHASTIC);
  EXPECT_EQ(t.productions[0].condition, -1);
}

TEST(Parser, FormalSlotsFollowTextOrder) {
  LSystem l = LSystem::fromText(
      "Axiom: A\nA(a) < B(b,c) > C(d) : b < c --> X(a + b*10 + c*100 + d*1000)\n");
  const LSystemData& d = l.data();
  const PgProduction& p = d.productions.productions[0];
  EXPECT_EQ(p.predecessor, 'B');
  EXPECT_EQ(p.pred_params, 2);
  EXPECT_EQ(p.lc_formals, 1);
  EXPECT_EQ(p.num_formals, 4);
  EXPECT_EQ(patternSymbols(d.productions, p.lc_begin, p.lc_count), "A");
  EXPECT_EQ(patternSymbols(d.productions, p.rc_begin, p.rc_count), "C");
  EXPECT_EQ(d.productions.patterns[p.lc_begin].num_params, 1);
  EXPECT_EQ(succParams(d, d.productions, p.succ_begin, {1, 2, 3, 4}), std::vector<float>{4321});
  EXPECT_EQ(evalAt(d, p.condition, {1, 2, 3, 4}), 1.0f);
  EXPECT_EQ(evalAt(d, p.condition, {1, 3, 2, 4}), 0.0f);
  EXPECT_TRUE(l.parametric());
}

TEST(Parser, ContextsIncludingBracketsAndStars) {
  LSystem l = LSystem::fromText(
      "Axiom: A\nA B < C > B[C]D --> X\n* < E > * --> Y\nF > G(x)[H] --> Z(x)\n");
  const RuleTable& t = l.data().productions;
  const PgProduction& p0 = t.productions[0];
  EXPECT_EQ(p0.predecessor, 'C');
  EXPECT_EQ(patternSymbols(t, p0.lc_begin, p0.lc_count), "AB");
  EXPECT_EQ(patternSymbols(t, p0.rc_begin, p0.rc_count), "B[C]D");
  const PgProduction& p1 = t.productions[1];
  EXPECT_EQ(p1.lc_count, 0);
  EXPECT_EQ(p1.rc_count, 0);
  const PgProduction& p2 = t.productions[2];
  EXPECT_EQ(patternSymbols(t, p2.rc_begin, p2.rc_count), "G[H]");
  EXPECT_EQ(t.patterns[p2.rc_begin].num_params, 1);
  EXPECT_EQ(p2.lc_formals, 0);
  EXPECT_EQ(p2.num_formals, 1);
}

TEST(Parser, SuccessorModulesAndParameters) {
  LSystem l = LSystem::fromText("Axiom: A(1)\nA(x) --> B(x, x+1) C [D(2)]\nF --> F--F&&^||G\n");
  const LSystemData& d = l.data();
  const RuleTable& t = d.productions;
  const PgProduction& p = t.productions[0];
  EXPECT_EQ(succSymbols(t, p), "BC[D]");
  EXPECT_EQ(p.succ_params, 3);
  EXPECT_EQ(succParams(d, t, p.succ_begin, {5}), (std::vector<float>{5, 6}));
  EXPECT_EQ(t.successors[p.succ_begin + 1].num_params, 0);
  EXPECT_EQ(succParams(d, t, p.succ_begin + 3, {5}), std::vector<float>{2});
  // In successors "--", "&&", "^" and "||" are module sequences.
  EXPECT_EQ(succSymbols(t, t.productions[1]), "F--F&&^||G");
  EXPECT_EQ(t.productions[1].succ_params, 0);
}

TEST(Parser, EmptySuccessorsConditionsAndArrows) {
  LSystem l = LSystem::fromText(
      "Axiom: A\nA -->\nB --> *\nC : * -> D\nE(t) : t = 2 \xE2\x86\x92 F ;\n");
  const RuleTable& t = l.data().productions;
  ASSERT_EQ(t.productions.size(), 4u);
  EXPECT_EQ(t.productions[0].succ_count, 0);
  EXPECT_EQ(t.productions[1].succ_count, 0);
  EXPECT_EQ(t.productions[2].condition, -1);
  EXPECT_EQ(succSymbols(t, t.productions[2]), "D");
  EXPECT_EQ(succSymbols(t, t.productions[3]), "F");
  EXPECT_EQ(evalAt(l.data(), t.productions[3].condition, {2}), 1.0f);
  EXPECT_EQ(evalAt(l.data(), t.productions[3].condition, {3}), 0.0f);
}

TEST(Parser, Probabilities) {
  LSystem l = LSystem::fromText(
      "#define P 0.25\nAxiom: F\nF --> F[+F]F : 1/3\nF --> F : P*2\nF --> G : 0\nG(x) --> G(x ? 1 : 2) : 1\n");
  const RuleTable& t = l.data().productions;
  EXPECT_FLOAT_EQ(t.productions[0].probability, 1.0f / 3.0f);
  EXPECT_EQ(t.productions[1].probability, 0.5f);
  EXPECT_EQ(t.productions[2].probability, 0.0f);
  EXPECT_EQ(t.productions[3].probability, 1.0f);
  EXPECT_EQ(succParams(l.data(), t, t.productions[3].succ_begin, {0}), std::vector<float>{2});
  EXPECT_TRUE(t.hasStochastic());
}

TEST(Parser, AxiomParametricAndNot) {
  LSystem p = LSystem::fromText("#define W 3\nAxiom: A(1) B C(W, -2.5)\n");
  EXPECT_TRUE(p.parametric());
  const ModuleString& a = p.axiom();
  EXPECT_EQ(a.symbols, (procgen::OverwriteVector<uint8_t>{'A', 'B', 'C'}));
  EXPECT_EQ(a.param_offsets, (procgen::OverwriteVector<uint64_t>{0, 1, 1, 3}));
  EXPECT_EQ(a.params, (procgen::OverwriteVector<float>{1, 3, -2.5f}));

  LSystem q = LSystem::fromText("Axiom: F+F\nF --> FF\n");
  EXPECT_FALSE(q.parametric());
  EXPECT_TRUE(q.axiom().param_offsets.empty());
  EXPECT_EQ(q.axiom().size(), 3u);

  // Parameters only in a successor still make the axiom parametric.
  LSystem r = LSystem::fromText("Axiom: A\nA --> B(1)\n");
  EXPECT_TRUE(r.parametric());
  EXPECT_EQ(r.axiom().param_offsets, (procgen::OverwriteVector<uint64_t>{0, 0}));
  LSystem s = LSystem::fromText("Axiom: A\nhomomorphism\nA(x) --> B\n");
  EXPECT_TRUE(s.parametric());
}

TEST(Parser, HeaderAndViewSettings) {
  LSystem l = LSystem::fromText(
      "Angle Factor: 16\nstep size: 2.5\ninitial line width: 10 pixels\nwidth factor: 0.75\n"
      "tropism direction: 0, -1, 0.5\nelasticity: .2\nseed: 18446744073709551615\n"
      "projection: parallel\nLsystem: 1\nderivation length: 7\nAxiom: F\nF --> FF\nendlsystem\n",
      "dir/model.l");
  EXPECT_EQ(l.name(), "model");
  EXPECT_EQ(l.data().source_file, "dir/model.l");
  EXPECT_EQ(l.derivationLength(), 7);
  EXPECT_EQ(l.view().angle_deg, 360.0f / 16.0f);
  EXPECT_EQ(l.view().step, 2.5f);
  EXPECT_EQ(l.view().initial_width, 10.0f);
  EXPECT_EQ(l.view().width_factor, 0.75f);
  EXPECT_EQ(l.view().tropism.x, 0.0f);
  EXPECT_EQ(l.view().tropism.y, -1.0f);
  EXPECT_EQ(l.view().tropism.z, 0.5f);
  EXPECT_EQ(l.view().elasticity, 0.2f);
  ASSERT_TRUE(l.seed().has_value());
  EXPECT_EQ(*l.seed(), 18446744073709551615ull);

  LSystem m = LSystem::fromText("angle increment: 22.5\ntropism direction: 1 -2 3\nAxiom: F\n");
  EXPECT_EQ(m.name(), "<input>");
  EXPECT_EQ(m.derivationLength(), 0);
  EXPECT_EQ(m.view().angle_deg, 22.5f);
  EXPECT_EQ(m.view().tropism.y, -2.0f);
  EXPECT_EQ(m.view().tropism.z, 3.0f);
  EXPECT_FALSE(m.seed().has_value());
  ViewSettings defaults;
  EXPECT_EQ(m.view().step, defaults.step);
}

TEST(Parser, DecompositionAndHomomorphismSections) {
  LSystem l = LSystem::fromText(
      "Lsystem: 1\nAxiom: A\nA --> B\ndecomposition\nmaximum depth: 4\nB --> CC\nhomomorphism: no "
      "warnings\nC --> F\nC --> G\nendlsystem\n");
  const LSystemData& d = l.data();
  EXPECT_EQ(d.productions.productions.size(), 1u);
  ASSERT_EQ(d.decomposition.productions.size(), 1u);
  EXPECT_EQ(d.decomposition.max_depth, 4);
  EXPECT_EQ(d.decomposition.first_by_symbol['B'], 0);
  ASSERT_EQ(d.homomorphism.productions.size(), 2u);
  EXPECT_EQ(d.homomorphism.max_depth, 1);  // cpfg's default
  EXPECT_EQ(d.homomorphism.first_by_symbol['C'], 0);
  EXPECT_EQ(d.homomorphism.productions[0].next, 1);
  EXPECT_EQ(d.productions.first_by_symbol['C'], PG_NO_PRODUCTION);
}

TEST(Parser, IgnoreAndConsider) {
  LSystem a = LSystem::fromText("#ignore: +-F\nAxiom: F\n");
  for (int c = 0; c < 256; ++c)
    EXPECT_EQ(a.data().ignored[c], (c == '+' || c == '-' || c == 'F') ? 1 : 0) << c;
  LSystem b = LSystem::fromText("#consider A B\nAxiom: F\n");
  for (int c = 0; c < 256; ++c) EXPECT_EQ(b.data().ignored[c], (c == 'A' || c == 'B') ? 0 : 1) << c;
  LSystem c = LSystem::fromText("ignore: /\nAxiom: F\n");
  EXPECT_EQ(c.data().ignored['/'], 1);
  EXPECT_EQ(c.data().ignored['F'], 0);
}

TEST(Parser, CommentsContinuationsAndRolls) {
  LSystem l = LSystem::fromText(
      "/* a block\n   comment */ Axiom: A // trailing\n"
      "// whole line\n"
      "A --> B /* inline */ C \\\n  D\n"
      "B --> [&FL!A]/////'[&FL!A]\n"
      "warnings\n");
  const RuleTable& t = l.data().productions;
  ASSERT_EQ(t.productions.size(), 2u);
  EXPECT_EQ(succSymbols(t, t.productions[0]), "BCD");
  EXPECT_EQ(t.productions[0].line, 4);
  EXPECT_EQ(succSymbols(t, t.productions[1]), "[&FL!A]/////'[&FL!A]");
  EXPECT_EQ(t.productions[1].line, 6);
  EXPECT_EQ(l.axiom().size(), 1u);
}

TEST(Parser, UnknownKeysBeforeLsystemAndTextAfterEnd) {
  LSystem l = LSystem::fromText(
      "scale factor: 0.9\nline style: cylinder\nLsystem: 1\nAxiom: F\nendlsystem\nanything at all\n");
  EXPECT_EQ(l.axiom().size(), 1u);
  expectError("Lsystem: 1\nAxiom: F\nscale factor: 2\n", 3, 1, "unknown directive 'scale factor:'");
}

TEST(Parser, DiagnosticsPointAtTheOffendingByte) {
  expectError("Axiom: F\nA(x,x) --> B\n", 2, 5, "'x' appears twice");
  expectError("Axiom: F\nA(x) --> B(y)\n", 2, 12, "unknown name 'y'");
  expectError("Axiom: F\nA(x) --> B(x+1\n", 2, 11, "unbalanced '('");
  expectError("Axiom: F\nA --> B\xC3\xA9\n", 2, 8, "invalid module symbol (byte 0xc3)");
  expectError("Lsystem: 1\nF --> FF\n", 3, 1, "missing 'Axiom:'");
  expectError("Axiom: F\n{ x = 1; }\n", 2, 1, "not supported");
  expectError("Axiom: F\nA : {x=1;} x > 0 --> B\n", 2, 5, "not supported");
  expectError("#include \"a.h\"\nAxiom: F\n", 1, 1, "unsupported preprocessor directive '#include'");
  expectError("Axiom: F\nA B --> C\n", 2, 3, "single module");
  expectError("Axiom: F\n --> C\n", 2, 2, "missing predecessor");
  expectError("Axiom: F\nmaximum depth: 3\n", 2, 1, "decomposition or homomorphism");
  expectError("#define F(x) x\nAxiom: F\n", 1, 10, "function-like macros");
  expectError("#define A 1\n#define A 2\nAxiom: F\n", 2, 9, "redefinition of 'A'");
  expectError("#define sin 1\nAxiom: F\n", 1, 9, "built-in function");
  expectError("#define Q ran(2)\nAxiom: F\n", 1, 11, "constant expression");
  expectError("#define Q\nAxiom: F\n", 1, 10, "needs a value");
  expectError("#define N 3\nAxiom: F\nA(N) --> B\n", 3, 3, "name of a #define");
  expectError("Axiom: F\nA(1) --> B\n", 2, 3, "expected a formal parameter name");
  expectError("Axiom: F\nA --> B : -1\n", 2, 11, "probability must be");
  expectError("Axiom: F\nA --> B :\n", 2, 10, "expected a probability");
  expectError("Axiom: F\nA : --> B\n", 2, 5, "expected a condition");
  expectError("#ignore a\n#consider b\nAxiom: F\n", 2, 1, "cannot both be used");
  expectError("Axiom: F\nAxiom: G\n", 2, 1, "more than one axiom");
  expectError("Axiom:\n", 1, 7, "empty axiom");
  expectError("Axiom: F(1,)\n", 1, 12, "empty parameter");
  expectError("Axiom: F(x)\n", 1, 10, "unknown constant 'x'");
  expectError("Lsystem: 1\nLsystem: 2\nAxiom: F\n", 2, 1, "sub-L-systems");
  expectError("derivation length: 2.5\nAxiom: F\n", 1, 20, "must be an integer");
  expectError("seed: -1\nAxiom: F\n", 1, 7, "unsigned 64-bit");
  expectError("angle factor: 0\nAxiom: F\n", 1, 15, "non-zero");
  expectError("tropism direction: 1, 2\nAxiom: F\n", 1, 24, "three components");
  expectError("Axiom: F\nA[ < B --> C\n", 2, 2, "brackets are not supported in a left context");
  expectError("Axiom: F\nhello world\n", 2, 1, "expected a production");
  expectError("Axiom: F /* open\n\n", 1, 10, "unterminated");
  expectError("Axiom: F\nA --> B(1) )\n", 2, 12, "unbalanced ')'");
  expectError("Axiom: F\nA --> (1)\n", 2, 7, "parameter list without a module");
  expectError("Axiom: F\nA(x) : x = 1 --> B(x = 1)\n", 2, 22, "only allowed in conditions");
}

TEST(Parser, TooManyFormals) {
  // 32 formals per module (PG_MAX_MODULE_PARAMS) on each side of the
  // predecessor, then one more in the right context: the 65th slot fails.
  auto list = [](int first, int n) {
    std::string s;
    for (int i = first; i < first + n; ++i) s += (i > first ? ",p" : "p") + std::to_string(i);
    return s;
  };
  std::string lhs = "A(" + list(0, 32) + ") < B(" + list(32, 32) + ") > C(p64)";
  int col = static_cast<int>(lhs.find("p64")) + 1;
  expectError("Axiom: F\n" + lhs + " --> B\n", 2, col, "too many formal parameters");
  expectError("Axiom: F\nA(" + list(0, 33) + ") --> B\n", 2, 2, "too many parameters (at most 32");
}

TEST(Parser, DiagnosticTextHasCaretLine) {
  try {
    LSystem::fromText("Axiom: F\nA(x) -->\tB(q)\n", "m.l");
    FAIL();
  } catch (const ParseError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.rfind("m.l:2:12: error: ", 0), 0u) << what;
    EXPECT_NE(what.find("\n    A(x) -->\tB(q)\n    "), std::string::npos) << what;
    // Columns 1..8 are spaces, 9 is the tab (reproduced), 10..11 spaces, caret at 12.
    EXPECT_EQ(what.substr(what.rfind('\n') + 1), "    " + std::string(8, ' ') + "\t  ^") << what;
  }
}

TEST(Parser, FromFileErrors) {
  try {
    LSystem::fromFile("/nonexistent/dir/missing.l");
    FAIL();
  } catch (const ParseError&) {
    FAIL() << "an unreadable file is not a parse error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/missing.l"), std::string::npos);
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
  }
}

TEST(Parser, EveryExampleModelParses) {
  std::filesystem::path dir = std::filesystem::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".l") continue;
    ++count;
    LSystem l = LSystem::fromFile(entry.path());  // throws (and fails) on a bad file
    EXPECT_EQ(l.name(), entry.path().stem().string());
    EXPECT_GT(l.axiom().size(), 0u) << entry.path();
    EXPECT_GT(l.data().productions.productions.size(), 0u) << entry.path();
  }
  EXPECT_GT(count, 0);
}

TEST(ViewFile, CpfgDirectivesAndUnknownOnes) {
  ViewSettings view;
  applyViewFile(
      "maximum depth: 40\nangle factor: 8\nprojection: perspective\nscale factor: 0.9\n"
      "initial line width: 3 pixels\nline style: cylinder\ntropism direction: 0,0,1\n"
      "initial elasticity: 0.3\nbegin\nangle increment: 30\n",
      "a.v", view);
  EXPECT_EQ(view.angle_deg, 30.0f);  // the later directive wins
  EXPECT_EQ(view.initial_width, 3.0f);
  EXPECT_EQ(view.tropism.z, 1.0f);
  EXPECT_EQ(view.elasticity, 0.3f);
  ViewSettings before = view;
  try {
    applyViewFile("step length: 2\nangle factor: x\n", "b.v", view);
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.location().file, "b.v");
    EXPECT_EQ(e.location().line, 2);
    EXPECT_EQ(e.location().column, 15);
  }
  EXPECT_EQ(view.step, before.step);  // unchanged on error
}

TEST(ModuleStringParse, NumericParameters) {
  ModuleString s = parseModuleString("F(1)[+A(2.5, -3e2)]B");
  EXPECT_EQ(s.symbols, (procgen::OverwriteVector<uint8_t>{'F', '[', '+', 'A', ']', 'B'}));
  EXPECT_EQ(s.param_offsets, (procgen::OverwriteVector<uint64_t>{0, 1, 1, 1, 3, 3, 3}));
  EXPECT_EQ(s.params, (procgen::OverwriteVector<float>{1, 2.5f, -300}));
  ModuleString plain = parseModuleString("F+F", false);
  EXPECT_TRUE(plain.param_offsets.empty());
  ModuleString forced = parseModuleString("F+F", true);
  EXPECT_EQ(forced.param_offsets, (procgen::OverwriteVector<uint64_t>{0, 0, 0, 0}));
  EXPECT_EQ(parseModuleString("").size(), 0u);
  // Non-finite values as toText() writes them (std::to_chars spelling).
  ModuleString nf = parseModuleString("A(inf,-inf,nan)");
  ASSERT_EQ(nf.params.size(), 3u);
  EXPECT_TRUE(std::isinf(nf.params[0]) && nf.params[0] > 0);
  EXPECT_TRUE(std::isinf(nf.params[1]) && nf.params[1] < 0);
  EXPECT_TRUE(std::isnan(nf.params[2]));
  try {
    parseModuleString("F(1");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.location().column, 2);
  }
}

}  // namespace
}  // namespace procgen
