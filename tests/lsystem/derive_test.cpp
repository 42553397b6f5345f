// The serial derivation engine (src/lsystem/derive.cpp, serial/rewrite.cpp,
// match.h): derived strings of small models against strings derived by hand
// (written out in the comments), the ABOP §1.8 context rules, stochastic
// choice, decomposition, homomorphism, cut and the memory budget. Random small
// grammars are compared with a textbook std::string rewriter written here,
// which knows nothing of procgen's tables, matcher or fast paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/reference_lsystem.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

ModuleString deriveModules(const std::string& text, int n, uint64_t seed = 1,
                           DeriveStats* stats = nullptr) {
  LSystem l = LSystem::fromText(text, "test.l");
  DeriveOptions o;
  o.iterations = n;
  o.seed = seed;
  return derive(l, o, stats);
}

std::string deriveText(const std::string& text, int n, uint64_t seed = 1,
                       DeriveStats* stats = nullptr) {
  return toText(deriveModules(text, n, seed, stats));
}

std::string repeat(const std::string& s, size_t times) {
  std::string out;
  out.reserve(s.size() * times);
  for (size_t i = 0; i < times; ++i) out += s;
  return out;
}

size_t countOf(const std::string& s, char c) { return static_cast<size_t>(std::count(s.begin(), s.end(), c)); }

// ---------------------------------------------------------------------------
// Derived strings of small models, derived by hand.

// ABOP p. 3 (Fig. 1.3), the algae model: a -> ab, b -> a, starting from b:
//   n=0 b, n=1 a, n=2 ab, n=3 aba, n=4 abaab, n=5 abaababa (Fibonacci lengths).
TEST(Derive, AlgaeAbopPage3) {
  const std::string model = "Axiom: b\na --> ab\nb --> a\n";
  const std::vector<std::string> want = {"b", "a", "ab", "aba", "abaab", "abaababa"};
  for (int n = 0; n <= 5; ++n) EXPECT_EQ(deriveText(model, n), want[static_cast<size_t>(n)]) << n;
  DeriveStats stats;
  deriveText(model, 5, 1, &stats);
  EXPECT_EQ(stats.iterations, 5);
  EXPECT_EQ(stats.modules, 8u);
  EXPECT_EQ(stats.step_modules, (std::vector<uint64_t>{1, 2, 3, 5, 8}));
  EXPECT_EQ(stats.modules_total, 1u + 2 + 3 + 5 + 8);  // steps 1..n, the axiom not counted
  EXPECT_EQ(stats.threads, 1);
}

// ABOP Fig. 1.24 a: F -> F[+F]F[-F]F. With X = F[+F]F[-F]F (n=1), n=2 replaces
// each of the five F's of X by X: X[+X]X[-X]X, 5*11 + 6 = 61 modules.
TEST(Derive, BracketedD0LFig124a) {
  const std::string model = "Axiom: F\nF --> F[+F]F[-F]F\n";
  const std::string x = "F[+F]F[-F]F";
  EXPECT_EQ(deriveText(model, 1), x);
  const std::string two =
      "F[+F]F[-F]F[+F[+F]F[-F]F]F[+F]F[-F]F[-F[+F]F[-F]F]F[+F]F[-F]F";
  EXPECT_EQ(two, x + "[+" + x + "]" + x + "[-" + x + "]" + x);  // the hand derivation, checked
  EXPECT_EQ(deriveText(model, 2), two);
  EXPECT_EQ(two.size(), 61u);
}

// ABOP Fig. 1.24 d: X -> F[+X]F[-X]+X, F -> FF, axiom X:
//   n=1 F[+X]F[-X]+X
//   n=2 FF[+F[+X]F[-X]+X]FF[-F[+X]F[-X]+X]+F[+X]F[-X]+X
TEST(Derive, BracketedD0LFig124d) {
  const std::string model = "Axiom: X\nX --> F[+X]F[-X]+X\nF --> FF\n";
  EXPECT_EQ(deriveText(model, 1), "F[+X]F[-X]+X");
  EXPECT_EQ(deriveText(model, 2), "FF[+F[+X]F[-X]+X]FF[-F[+X]F[-X]+X]+F[+X]F[-X]+X");
}

// ABOP §1.10, p. 41 (derivation drawn in Fig. 1.30, p. 43):
//   ω: B(2)A(4,4)
//   p1: A(x,y) : y <= 3 -> A(x*2, x+y)
//   p2: A(x,y) : y > 3  -> B(x)A(x/y, 0)
//   p3: B(x)   : x < 1  -> C
//   p4: B(x)   : x >= 1 -> B(x-1)
// n=1: B(2)->B(1); A(4,4): y>3 -> B(4)A(1,0)          => B(1)B(4)A(1,0)
// n=2: B(1)->B(0); B(4)->B(3); A(1,0) -> A(2,1)       => B(0)B(3)A(2,1)
// n=3: B(0)->C; B(3)->B(2); A(2,1) -> A(4,3)          => CB(2)A(4,3)
// n=4: C stays; B(2)->B(1); A(4,3) -> A(8,7)          => CB(1)A(8,7)
TEST(Derive, ParametricAbopPage41) {
  const std::string model =
      "Axiom: B(2)A(4,4)\n"
      "A(x,y) : y <= 3 --> A(x*2,x+y)\n"
      "A(x,y) : y > 3 --> B(x)A(x/y,0)\n"
      "B(x) : x < 1 --> C\n"
      "B(x) : x >= 1 --> B(x-1)\n";
  const std::vector<std::string> want = {"B(2)A(4,4)", "B(1)B(4)A(1,0)", "B(0)B(3)A(2,1)",
                                         "CB(2)A(4,3)", "CB(1)A(8,7)"};
  for (int n = 0; n <= 4; ++n) EXPECT_EQ(deriveText(model, n), want[static_cast<size_t>(n)]) << n;
}

// ABOP p. 42: A(t) : t > 5 -> B(t+1)CD(t^0.5, t-2). A(9) -> B(10)CD(3,7);
// A(3) fails the condition and is copied.
TEST(Derive, ParametricAbopPage42Condition) {
  EXPECT_EQ(deriveText("Axiom: A(9)A(3)\nA(t) : t > 5 --> B(t+1)CD(t^0.5,t-2)\n", 1),
            "B(10)CD(3,7)A(3)");
}

// ABOP p. 43: A(x) < B(y) > C(z) : x+y+z > 10 -> E((x+y)/2)F((y+z)/2).
// First B: 1+2+3 = 6, copied. Second B: 4+5+6 = 15 -> E(4.5)F(5.5).
TEST(Derive, ParametricContextAbopPage43) {
  EXPECT_EQ(deriveText("Axiom: A(1)B(2)C(3)A(4)B(5)C(6)\n"
                       "A(x) < B(y) > C(z) : x+y+z > 10 --> E((x+y)/2)F((y+z)/2)\n",
                       1),
            "A(1)B(2)C(3)A(4)E(4.5)F(5.5)C(6)");
}

TEST(Derive, FirstMatchingProductionInFileOrder) {
  // Two unconditional productions for A: the first wins.
  EXPECT_EQ(deriveText("Axiom: AB\nA --> X\nA --> Y\n", 1), "XB");
  // Overlapping conditions: A(2) satisfies both, the first (B) applies;
  // A(-1) satisfies neither condition and falls through to D.
  EXPECT_EQ(deriveText("Axiom: A(2)A(0.5)A(-1)\nA(x) : x > 0 --> B\nA(x) : x > 1 --> C\nA(x) --> D\n", 1),
            "BBD");
  // A context production listed after a context-free one never applies ...
  EXPECT_EQ(deriveText("Axiom: BACA\nA --> X\nB < A --> Y\n", 1), "BXCX");
  // ... and before it, it applies only where its context is there.
  EXPECT_EQ(deriveText("Axiom: BACA\nB < A --> Y\nA --> X\n", 1), "BYCX");
  // A production matches only with the right number of parameters (paper §2).
  EXPECT_EQ(deriveText("Axiom: A A(1) A(1,2)\nA(x) --> B(x)\n", 1), "AB(1)A(1,2)");
}

TEST(Derive, EmptySuccessorAndIdentity) {
  // A --> (nothing) erases A; letters without productions are copied.
  EXPECT_EQ(deriveText("Axiom: AQAQ\nA -->\n", 1), "QQ");
  EXPECT_EQ(deriveText("Axiom: AQAQ\nA --> *\n", 1), "QQ");
  EXPECT_EQ(deriveText("Axiom: AB\nA --> AA\n", 0), "AB");
  // Everything erased: the string becomes empty and stays empty (D0L path,
  // then the generic path forced by a second production for an unused letter).
  DeriveStats stats;
  EXPECT_EQ(deriveText("Axiom: AA\nA -->\n", 3, 1, &stats), "");
  EXPECT_EQ(stats.step_modules, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(deriveText("Axiom: AA\nA -->\nZ --> A\nZ --> B\n", 3), "");
  EXPECT_EQ(deriveText("Axiom: A(1)A(2)\nA(x) -->\n", 2), "");
}

// ---------------------------------------------------------------------------
// ABOP §1.8 context-sensitive L-systems (pp. 30-32).

// ABOP p. 30: a signal propagates along a filament:
//   ω: baaaaaaaa, p1: b < a -> b, p2: b -> a.
// Each step moves b one place right (parallel rewriting reads the old string):
//   n=1 abaaaaaaa, n=2 aabaaaaaa, ..., n=8 aaaaaaaab, n=9 aaaaaaaaa.
TEST(DeriveContext, SignalPropagationAbopPage30) {
  const std::string model = "Axiom: baaaaaaaa\nb < a --> b\nb --> a\n";
  for (int n = 0; n <= 9; ++n) {
    std::string want(9, 'a');
    if (n < 9) want[static_cast<size_t>(n)] = 'b';
    EXPECT_EQ(deriveText(model, n), want) << n;
  }
}

// Parallel, not sequential, rewriting: every A of AAA that has an A on its left
// becomes B in the same step (a left-to-right in-place rewrite would give ABA).
TEST(DeriveContext, ContextsReadTheOldString) {
  EXPECT_EQ(deriveText("Axiom: AAA\nA < A --> B\n", 1), "ABB");
  EXPECT_EQ(deriveText("Axiom: AAA\nA > A --> B\n", 1), "BBA");
}

// ABOP p. 32, Fig. 1.25: BC < S > G[H]M applies to S in ABC[DE][SG[HI[JK]L]MNO]:
// the left context leaves S's branch through its '[', skips [DE] and finds C
// then B; the right context finds G, enters [H..., matches H, skips the rest
// I[JK]L of that branch, and finds M.
TEST(DeriveContext, AbopFig125BranchesBothSides) {
  const std::string rule = "BC < S > G[H]M --> X\n";
  EXPECT_EQ(deriveText("Axiom: ABC[DE][SG[HI[JK]L]MNO]\n" + rule, 1), "ABC[DE][XG[HI[JK]L]MNO]");
  // Variants where one part of the context is missing.
  EXPECT_EQ(deriveText("Axiom: ABC[DE][SG[HI[JK]L]NO]\n" + rule, 1), "ABC[DE][SG[HI[JK]L]NO]");
  EXPECT_EQ(deriveText("Axiom: ABD[DE][SG[HI[JK]L]MNO]\n" + rule, 1), "ABD[DE][SG[HI[JK]L]MNO]");
  EXPECT_EQ(deriveText("Axiom: ABC[DE][SG[IH]M]\n" + rule, 1), "ABC[DE][SG[IH]M]");
}

TEST(DeriveContext, LeftContextSkipsBranchesAndStepsOut) {
  const std::string rule = "B < A --> X\n";
  EXPECT_EQ(deriveText("Axiom: BA\n" + rule, 1), "BX");
  EXPECT_EQ(deriveText("Axiom: B[C]A\n" + rule, 1), "B[C]X");          // whole branch skipped
  EXPECT_EQ(deriveText("Axiom: B[C[D]E][F]A\n" + rule, 1), "B[C[D]E][F]X");  // nested, several
  EXPECT_EQ(deriveText("Axiom: B[A]\n" + rule, 1), "B[X]");            // out through '['
  EXPECT_EQ(deriveText("Axiom: B[[C]A]\n" + rule, 1), "B[[C]X]");      // skip, then out
  EXPECT_EQ(deriveText("Axiom: BC[A]\n" + rule, 1), "BC[A]");          // parent is C, not B
  EXPECT_EQ(deriveText("Axiom: [B]A\n" + rule, 1), "[B]A");            // B is in a closed branch
  EXPECT_EQ(deriveText("Axiom: A\n" + rule, 1), "A");                  // nothing on the left
}

TEST(DeriveContext, RightContextSkipsLateralBranchesNotPastTheEnd) {
  const std::string rule = "A > B --> X\n";
  EXPECT_EQ(deriveText("Axiom: AB\n" + rule, 1), "XB");
  EXPECT_EQ(deriveText("Axiom: A[C]B\n" + rule, 1), "X[C]B");          // lateral branch skipped
  EXPECT_EQ(deriveText("Axiom: A[C][D[E]]B\n" + rule, 1), "X[C][D[E]]B");
  EXPECT_EQ(deriveText("Axiom: A[B]C\n" + rule, 1), "A[B]C");          // B is lateral; C follows
  EXPECT_EQ(deriveText("Axiom: [A]B\n" + rule, 1), "[A]B");            // none past the ']'
  EXPECT_EQ(deriveText("Axiom: C[A[D]]B\n" + rule, 1), "C[A[D]]B");
  EXPECT_EQ(deriveText("Axiom: [AB]\n" + rule, 1), "[XB]");
  EXPECT_EQ(deriveText("Axiom: A\n" + rule, 1), "A");
}

TEST(DeriveContext, IgnoredSymbols) {
  // Without #ignore, '+' and '-' are ordinary modules and block the context.
  EXPECT_EQ(deriveText("Axiom: B+-A\nB < A --> X\n", 1), "B+-A");
  EXPECT_EQ(deriveText("#ignore: +-\nAxiom: B+-A\nB < A --> X\n", 1), "B+-X");
  EXPECT_EQ(deriveText("#ignore: +-\nAxiom: B+C-A\nB < A --> X\n", 1), "B+C-A");
  EXPECT_EQ(deriveText("#ignore: +-\nAxiom: A-[+C]+-B\nA > B --> X\n", 1), "X-[+C]+-B");
  // Ignored modules inside a skipped branch do not matter either way.
  EXPECT_EQ(deriveText("#ignore +\nAxiom: B+[C]+A\nB < A --> X\n", 1), "B+[C]+X");
  // #consider: everything but the listed symbols is ignored.
  EXPECT_EQ(deriveText("#consider AB\nAxiom: BFGHA\nB < A --> X\n", 1), "BFGHX");
}

TEST(DeriveContext, MultiModuleContexts) {
  const std::string rule = "#ignore: +\nBC < A > DE --> X\n";
  EXPECT_EQ(deriveText("Axiom: BCADE\n" + rule, 1), "BCXDE");
  EXPECT_EQ(deriveText("Axiom: B+C[Y]A[Z]D+E\n" + rule, 1), "B+C[Y]X[Z]D+E");
  EXPECT_EQ(deriveText("Axiom: B[Y]C[A]D\n" + rule, 1), "B[Y]C[A]D");  // no right context in the branch
  EXPECT_EQ(deriveText("Axiom: B[Y]C[ADE]\n" + rule, 1), "B[Y]C[XDE]");
  EXPECT_EQ(deriveText("Axiom: B+C[Y]A[Z]D+F\n" + rule, 1), "B+C[Y]A[Z]D+F");
  EXPECT_EQ(deriveText("Axiom: CBADE\n" + rule, 1), "CBADE");  // order matters
  EXPECT_EQ(deriveText("Axiom: BCAED\n" + rule, 1), "BCAED");
}

TEST(DeriveContext, BracketedRightContext) {
  const std::string rule = "A > B[C]D --> X\n";
  EXPECT_EQ(deriveText("Axiom: AB[C]D\n" + rule, 1), "XB[C]D");
  EXPECT_EQ(deriveText("Axiom: AB[CEF[G]]D\n" + rule, 1), "XB[CEF[G]]D");  // rest of branch skipped
  EXPECT_EQ(deriveText("Axiom: A[Q]B[C]D\n" + rule, 1), "X[Q]B[C]D");
  EXPECT_EQ(deriveText("Axiom: AB[C]E\n" + rule, 1), "AB[C]E");
  EXPECT_EQ(deriveText("Axiom: AB[E]D\n" + rule, 1), "AB[E]D");
  EXPECT_EQ(deriveText("Axiom: ABD\n" + rule, 1), "ABD");
  EXPECT_EQ(deriveText("Axiom: AB[C]\n" + rule, 1), "AB[C]");
}

// Nested pattern brackets: A > B[C[D]E]F. Each pattern ']' skips the rest of
// the branch its '[' entered.
TEST(DeriveContext, NestedBracketedRightContext) {
  const std::string rule = "A > B[C[D]E]F --> X\n";
  EXPECT_EQ(deriveText("Axiom: AB[C[D]E]F\n" + rule, 1), "XB[C[D]E]F");
  EXPECT_EQ(deriveText("Axiom: AB[C[DQ[R]]EY]F\n" + rule, 1), "XB[C[DQ[R]]EY]F");
  EXPECT_EQ(deriveText("Axiom: AB[C[D]YE]F\n" + rule, 1), "AB[C[D]YE]F");  // E must follow [D...]
  EXPECT_EQ(deriveText("Axiom: AB[C[D]E]GF\n" + rule, 1), "AB[C[D]E]GF");
  // Ignored modules before a pattern '[' and inside the branch.
  EXPECT_EQ(deriveText("#ignore +\nAxiom: A+B+[+C[D]+E]+F\n" + rule, 1), "X+B+[+C[D]+E]+F");
}

// Parameter counts must agree for context modules too (paper §2).
TEST(DeriveContext, ContextParameterCountsMustAgree) {
  EXPECT_EQ(deriveText("Axiom: A B A(1) B\nA(x) < B --> C(x)\n", 1), "ABA(1)C(1)");
  EXPECT_EQ(deriveText("Axiom: B A(1,2) B C\nB > A(x,y) C --> D(x+y)\n", 1), "BA(1,2)BC");
  EXPECT_EQ(deriveText("Axiom: B A(1,2) C\nB > A(x,y) C --> D(x+y)\n", 1), "D(3)A(1,2)C");
}

// Strings with unbalanced brackets (possible with hand-written axioms) must
// not crash the bracket-aware search: no context is found across an
// unmatched ']' walking back, and rewriting elsewhere goes on.
TEST(DeriveContext, UnbalancedBracketsDoNotCrash) {
  const std::string rules = "B < A --> X\nA > B --> Y\nC --> CC\n";
  for (const char* axiom : {"B]A", "A[B", "]]A[[B", "B[A", "[[[C", "]]]C", "A]B[C"}) {
    SCOPED_TRACE(axiom);
    const std::string got = deriveText(std::string("Axiom: ") + axiom + "\n" + rules, 2);
    EXPECT_EQ(countOf(got, '['), countOf(axiom, '['));
    EXPECT_EQ(countOf(got, ']'), countOf(axiom, ']'));
  }
  EXPECT_EQ(deriveText("Axiom: B]A\n" + rules, 1), "B]A");  // no left context across ']'
  EXPECT_EQ(deriveText("Axiom: B[A\n" + rules, 1), "B[X");  // out through the '['
}

TEST(DeriveContext, ParametricContextBindsAcrossBranches) {
  // B's left context is A(1): the branch [A(5)] is skipped. The right context
  // of A(1) is B(2) past the lateral branch.
  EXPECT_EQ(deriveText("Axiom: A(1)[A(5)]B(2)\nA(x) < B(y) --> B(x+y)\n", 1), "A(1)[A(5)]B(3)");
  EXPECT_EQ(deriveText("Axiom: A(1)[A(5)]B(2)\nA(x) > B(y) --> A(x*10+y)\n", 1), "A(12)[A(5)]B(2)");
  // A condition over context parameters.
  EXPECT_EQ(deriveText("Axiom: A(1)B(2)A(3)B(1)\nA(x) < B(y) : x > y --> C\n", 1), "A(1)B(2)A(3)C");
}

// ---------------------------------------------------------------------------
// Random small grammars against a textbook rewriter.

struct RefProduction {
  std::string left;   // left context in text order ("" for none)
  char pred = 0;
  std::string right;  // right context ("" for none)
  std::string successor;
};

struct RefGrammar {
  std::string axiom;
  std::vector<RefProduction> productions;  // file order
  std::set<char> ignored;

  std::string text() const {
    std::string t;
    if (!ignored.empty()) t += "#ignore: " + std::string(ignored.begin(), ignored.end()) + "\n";
    t += "Axiom: " + axiom + "\n";
    for (const RefProduction& p : productions) {
      if (!p.left.empty()) t += p.left + " < ";
      t += p.pred;
      if (!p.right.empty()) t += " > " + p.right;
      t += " --> " + p.successor + "\n";
    }
    return t;
  }
};

/// Index of the matching bracket of s[i] (textbook stack walk).
size_t matchingBracket(const std::string& s, size_t i) {
  int depth = 0;
  if (s[i] == '[') {
    for (size_t j = i; j < s.size(); ++j) {
      if (s[j] == '[') ++depth;
      if (s[j] == ']' && --depth == 0) return j;
    }
  } else {
    for (size_t j = i + 1; j-- > 0;) {
      if (s[j] == ']') ++depth;
      if (s[j] == '[' && --depth == 0) return j;
    }
  }
  ADD_FAILURE() << "unbalanced " << s;
  return i;
}

/// ABOP §1.8 / cpfg: the module before position i for context matching.
long leftNeighbour(const std::string& s, long i, const std::set<char>& ignored) {
  long j = i - 1;
  while (j >= 0) {
    char c = s[static_cast<size_t>(j)];
    if (c == ']') j = static_cast<long>(matchingBracket(s, static_cast<size_t>(j))) - 1;
    else if (c == '[' || ignored.count(c)) --j;
    else return j;
  }
  return -1;
}

/// The module after position i: lateral branches skipped, nothing past ']'.
long rightNeighbour(const std::string& s, long i, const std::set<char>& ignored) {
  long j = i + 1;
  const long n = static_cast<long>(s.size());
  while (j < n) {
    char c = s[static_cast<size_t>(j)];
    if (c == '[') j = static_cast<long>(matchingBracket(s, static_cast<size_t>(j))) + 1;
    else if (c == ']') return -1;
    else if (ignored.count(c)) ++j;
    else return j;
  }
  return -1;
}

bool refMatches(const RefProduction& p, const std::string& s, long i, const std::set<char>& ignored) {
  if (s[static_cast<size_t>(i)] != p.pred) return false;
  long j = i;
  for (size_t k = p.left.size(); k-- > 0;) {
    j = leftNeighbour(s, j, ignored);
    if (j < 0 || s[static_cast<size_t>(j)] != p.left[k]) return false;
  }
  j = i;
  for (char want : p.right) {
    j = rightNeighbour(s, j, ignored);
    if (j < 0 || s[static_cast<size_t>(j)] != want) return false;
  }
  return true;
}

/// One parallel rewriting step, then cutting. `context_hits` counts the
/// modules rewritten by a production with a context.
std::string refStep(const RefGrammar& g, const std::string& s, uint64_t* context_hits = nullptr) {
  std::string out;
  for (long i = 0; i < static_cast<long>(s.size()); ++i) {
    const RefProduction* hit = nullptr;
    for (const RefProduction& p : g.productions)
      if (refMatches(p, s, i, g.ignored)) {
        hit = &p;
        break;
      }
    if (hit) out += hit->successor;
    else out += s[static_cast<size_t>(i)];
    if (hit && context_hits && !(hit->left.empty() && hit->right.empty())) ++*context_hits;
  }
  return procgen::test::cutReference(out);
}

/// A random word over `letters` with balanced brackets, up to `max_len` characters.
std::string randomWord(std::mt19937& rng, const std::string& letters, int max_len, bool brackets) {
  std::uniform_int_distribution<int> len_d(0, max_len), letter_d(0, static_cast<int>(letters.size()) - 1),
      kind_d(0, 9);
  const int len = len_d(rng);
  std::string w;
  int depth = 0;
  for (int k = 0; k < len; ++k) {
    int kind = kind_d(rng);
    if (brackets && kind == 0 && static_cast<int>(w.size()) + depth + 2 <= max_len) {
      w += '[';
      ++depth;
    } else if (brackets && kind == 1 && depth > 0) {
      w += ']';
      --depth;
    } else {
      w += letters[static_cast<size_t>(letter_d(rng))];
    }
  }
  w += std::string(static_cast<size_t>(depth), ']');
  return w;
}

void compareWithReference(const RefGrammar& g, int max_steps, size_t max_len,
                          uint64_t* context_hits = nullptr) {
  SCOPED_TRACE(g.text());
  LSystem l = LSystem::fromText(g.text(), "random.l");
  std::string want = g.axiom;
  std::vector<uint64_t> lengths;
  int steps = 0;
  for (; steps < max_steps; ++steps) {
    uint64_t hits = 0;
    std::string next = refStep(g, want, &hits);
    if (next.size() > max_len) break;
    if (context_hits) *context_hits += hits;
    want = std::move(next);
    lengths.push_back(want.size());
  }
  DeriveOptions o;
  o.iterations = steps;
  DeriveStats stats;
  ModuleString got = derive(l, o, &stats);
  ASSERT_EQ(toText(got), want) << "after " << steps << " steps";
  EXPECT_EQ(stats.step_modules, lengths);
}

// D0L: one context-free production per letter, or none. Each grammar is also
// run a second time with a duplicate production for an unused letter, which
// makes the engine take its generic count/rewrite path instead of the D0L one.
TEST(DeriveReference, RandomD0LGrammarsMatchTextbookRewriting) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 150; ++trial) {
    RefGrammar g;
    g.axiom = randomWord(rng, "ABF+-", 5, true);
    if (g.axiom.empty()) g.axiom.push_back('A');  // (not = "A": a GCC 12 -Wrestrict false positive)
    // Every third grammar may also cut branches with '%' (in successors only).
    const std::string alphabet = trial % 3 == 0 ? "ABF+-%" : "ABF+-";
    for (char c : std::string("ABF")) {
      if (rng() % 5 == 0) continue;
      g.productions.push_back({"", c, "", randomWord(rng, alphabet, 7, true)});
    }
    compareWithReference(g, 8, 4000);
    RefGrammar generic = g;
    generic.productions.push_back({"", 'Z', "", "A"});
    generic.productions.push_back({"", 'Z', "", "B"});
    compareWithReference(generic, 8, 4000);
  }
}

// The reference helpers themselves, on hand-checked cases.
TEST(DeriveReference, ReferenceHelpersAreTextbook) {
  const std::set<char> none, plus = {'+'};
  EXPECT_EQ(matchingBracket("A[B[C]]", 1), 6u);
  EXPECT_EQ(matchingBracket("A[B[C]]", 5), 3u);
  EXPECT_EQ(leftNeighbour("B[C]A", 4, none), 0);
  EXPECT_EQ(leftNeighbour("B[A", 2, none), 0);
  EXPECT_EQ(leftNeighbour("B+A", 2, plus), 0);
  EXPECT_EQ(leftNeighbour("[B]A", 3, none), -1);
  EXPECT_EQ(rightNeighbour("A[C]B", 0, none), 4);
  EXPECT_EQ(rightNeighbour("[A]B", 1, none), -1);
  EXPECT_EQ(procgen::test::cutReference("A[B%C]D"), "A[B]D");
  EXPECT_EQ(procgen::test::cutReference("AB%C[D]E"), "AB");
  EXPECT_EQ(procgen::test::cutReference("A[B[C%D]E%F]G"), "A[B[C]E]G");
  RefGrammar g;
  g.productions = {{"b", 'a', "", "b"}, {"", 'b', "", "a"}};
  EXPECT_EQ(refStep(g, "baaa"), "abaa");  // ABOP p. 30
}

// Context-sensitive: several productions per letter in random order, left and
// right contexts of up to two modules, random #ignore sets, bracketed strings.
TEST(DeriveReference, RandomContextGrammarsMatchTextbookRewriting) {
  std::mt19937 rng(777);
  const std::string letters = "ABCD";
  uint64_t context_hits = 0;
  for (int trial = 0; trial < 300; ++trial) {
    RefGrammar g;
    for (char c : std::string("+-D"))
      if (rng() % 3 == 0) g.ignored.insert(c);
    std::string context_letters;
    for (char c : letters)
      if (!g.ignored.count(c)) context_letters += c;
    auto context = [&]() {  // one module (70%) or two
      std::string w(1, context_letters[rng() % context_letters.size()]);
      if (rng() % 10 < 3) w += context_letters[rng() % context_letters.size()];
      return w;
    };
    g.axiom = randomWord(rng, "ABCD+-", 12, true);
    if (g.axiom.size() < 3) g.axiom = "A[B]C";
    const int nprod = 2 + static_cast<int>(rng() % 6);
    for (int k = 0; k < nprod; ++k) {
      RefProduction p;
      p.pred = "ABC"[rng() % 3];
      const unsigned kind = rng() % 8;  // none 1/8, left 3/8, right 3/8, both 1/8
      if (kind >= 1 && kind <= 3) p.left = context();
      if (kind >= 4 && kind <= 6) p.right = context();
      if (kind == 7) p.left = context(), p.right = context();
      p.successor = randomWord(rng, "ABCABCD+-", 7, true);
      g.productions.push_back(p);
    }
    // Context-free fallbacks after the context productions keep strings growing.
    for (char c : std::string("ABC"))
      if (rng() % 2) g.productions.push_back({"", c, "", randomWord(rng, "ABCABCD+-", 5, true)});
    compareWithReference(g, 7, 3000, &context_hits);
  }
  // The comparison is not vacuous: context productions did fire, often.
  EXPECT_GT(context_hits, 2000u);
}

// ---------------------------------------------------------------------------
// Stochastic productions.

const char* kCoin = "X --> a : 1\nX --> b : 1\n";

TEST(DeriveStochastic, SameSeedSameStringDifferentSeedsDifferentStrings) {
  const std::string model = "Axiom: " + repeat("X", 1000) + "\n" + kCoin;
  const std::string s1 = deriveText(model, 1, 1);
  EXPECT_EQ(s1, deriveText(model, 1, 1));
  EXPECT_EQ(countOf(s1, 'X'), 0u);
  // 1000 fair choices: equal strings for two seeds has probability 2^-1000.
  EXPECT_NE(s1, deriveText(model, 1, 2));
  // The high half of the 64-bit seed counts too.
  EXPECT_NE(s1, deriveText(model, 1, 1 + (uint64_t{1} << 32)));
  EXPECT_EQ(deriveText(model, 1, 1 + (uint64_t{1} << 32)), deriveText(model, 1, 1 + (uint64_t{1} << 32)));
  // The file's seed is only a default: derive() uses the options' seed.
  EXPECT_EQ(deriveText("seed: 99\n" + model, 1, 7), deriveText(model, 1, 7));
}

/// Chi-square statistic of observed counts against expected probabilities.
double chiSquare(const std::vector<double>& observed, const std::vector<double>& p) {
  double total = 0;
  for (double o : observed) total += o;
  double chi = 0;
  for (size_t k = 0; k < observed.size(); ++k) {
    double e = total * p[k];
    chi += (observed[k] - e) * (observed[k] - e) / e;
  }
  return chi;
}

// Weights 1 : 1.5 : 2.5 are normalised to 0.2 / 0.3 / 0.5. With 2 degrees of
// freedom, P(chi2 > 25) = e^-12.5 ≈ 4e-6: a generous threshold, and the seeds
// are fixed so the test is deterministic.
TEST(DeriveStochastic, ChoiceFrequenciesFollowTheProbabilities) {
  const std::string model = "Axiom: " + repeat("X", 30000) + "\nX --> a : 1\nX --> b : 1.5\nX --> c : 2.5\n";
  for (uint64_t seed : {1ull, 2ull, 0xdeadbeefcafeull}) {
    const std::string s = deriveText(model, 1, seed);
    ASSERT_EQ(s.size(), 30000u);
    std::vector<double> obs = {double(countOf(s, 'a')), double(countOf(s, 'b')), double(countOf(s, 'c'))};
    EXPECT_EQ(obs[0] + obs[1] + obs[2], 30000.0);
    EXPECT_LT(chiSquare(obs, {0.2, 0.3, 0.5}), 25.0) << "seed " << seed << ": " << obs[0] << " " << obs[1]
                                                     << " " << obs[2];
  }
}

// Only matching productions take part: for x > 0 the choice is between B and
// D (C's condition fails), so C never appears and B, D split about evenly.
// A production with weight 0 is never chosen.
TEST(DeriveStochastic, ChoiceIsAmongTheMatchingProductions) {
  const std::string model = "Axiom: " + repeat("A(1)", 4000) + repeat("A(-1)", 4000) +
                            "\nA(x) : x > 0 --> B : 1\nA(x) : x < 0 --> C : 1\nA(x) --> D : 1\nA(x) --> E : 0\n";
  const std::string s = deriveText(model, 1, 5);
  const std::string first = s.substr(0, 4000), second = s.substr(4000);
  EXPECT_EQ(countOf(first, 'C'), 0u);
  EXPECT_EQ(countOf(second, 'B'), 0u);
  EXPECT_EQ(countOf(s, 'E'), 0u);
  EXPECT_EQ(countOf(first, 'B') + countOf(first, 'D'), 4000u);
  EXPECT_EQ(countOf(second, 'C') + countOf(second, 'D'), 4000u);
  // Binomial(4000, 1/2): sd ≈ 31.6; allow 6 sd.
  EXPECT_NEAR(double(countOf(first, 'B')), 2000.0, 190.0);
  EXPECT_NEAR(double(countOf(second, 'C')), 2000.0, 190.0);
}

// The choice for a module is keyed by (seed, step, position): it does not
// depend on the other modules, neighbours are independent, and steps are
// independent.
TEST(DeriveStochastic, ChoicesAreKeyedByPositionAndStep) {
  const size_t n = 4000;
  const std::string all = deriveText("Axiom: " + repeat("X", n) + "\n" + kCoin, 1, 11);
  // Every other X replaced by Q (no production): the remaining positions keep their choice.
  const std::string half = deriveText("Axiom: " + repeat("XQ", n / 2) + "\n" + kCoin, 1, 11);
  ASSERT_EQ(all.size(), n);
  ASSERT_EQ(half.size(), n);
  for (size_t i = 0; i < n; i += 2) ASSERT_EQ(all[i], half[i]) << i;
  for (size_t i = 1; i < n; i += 2) ASSERT_EQ(half[i], 'Q') << i;

  // Pairs of neighbours (i, i+1), i even: four equally likely cells.
  std::vector<double> pairs(4, 0.0);
  for (size_t i = 0; i + 1 < n; i += 2) pairs[(all[i] == 'a') * 2 + (all[i + 1] == 'a')] += 1;
  EXPECT_LT(chiSquare(pairs, {0.25, 0.25, 0.25, 0.25}), 30.0);  // 3 dof, p ≈ 1.4e-6

  // X -> X | Y, Y copied: positions stay put, so X survives two steps with
  // probability 1/4 when the steps draw independently (1/2 if they did not).
  const std::string two = deriveText("Axiom: " + repeat("X", 8000) + "\nX --> X : 1\nX --> Y : 1\n", 2, 3);
  ASSERT_EQ(two.size(), 8000u);
  EXPECT_NEAR(double(countOf(two, 'X')), 2000.0, 6 * 38.8);  // sd = sqrt(8000 * 1/4 * 3/4)
}

// A parametric stochastic model: the same choice is made whether or not the
// string carries parameters elsewhere (position and seed only).
TEST(DeriveStochastic, DeterministicAcrossRepeatedRunsOverSeveralSteps) {
  const std::string model = "Axiom: F(1)\nF(x) --> F(x/2)[+F(x/3)]F(x/2) : 0.5\nF(x) --> F(x*2) : 0.5\n";
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    DeriveStats a, b;
    const ModuleString sa = deriveModules(model, 6, seed, &a);
    const ModuleString sb = deriveModules(model, 6, seed, &b);
    EXPECT_TRUE(sa == sb) << seed;
    EXPECT_EQ(a.step_modules, b.step_modules);
    EXPECT_EQ(stringHash(sa), stringHash(sb));
  }
}

// ---------------------------------------------------------------------------
// Decomposition, homomorphism, cut.

// A -> AB; decomposition B -> C (depth 1):
//   n=1: AB -> decomposed AC
//   n=2: A -> AB, C copied: ABC -> decomposed ACC
// With C -> CC among the productions:
//   n=2: A -> AB, C -> CC: ABCC -> ACCC; lengths 2, 4.
TEST(DeriveDecomposition, AppliedAfterEachStep) {
  EXPECT_EQ(deriveText("Axiom: A\nA --> AB\ndecomposition\nB --> C\n", 1), "AC");
  EXPECT_EQ(deriveText("Axiom: A\nA --> AB\ndecomposition\nB --> C\n", 2), "ACC");
  DeriveStats stats;
  EXPECT_EQ(deriveText("Axiom: A\nA --> AB\nC --> CC\ndecomposition\nB --> C\n", 2, 1, &stats), "ACCC");
  EXPECT_EQ(stats.step_modules, (std::vector<uint64_t>{2, 4}));
  EXPECT_EQ(stats.modules_total, 6u);
}

// Chain B -> C -> D -> E in the decomposition: each pass rewrites once, so the
// maximum depth limits how far a new B gets within one step.
//   depth 1: AB -> AC; depth 2: -> AD; depth 3: -> AE; depth 9: stops at AE.
TEST(DeriveDecomposition, MaximumDepth) {
  auto model = [](const std::string& depth) {
    return "Axiom: A\nA --> AB\ndecomposition\n" + depth + "B --> C\nC --> D\nD --> E\n";
  };
  EXPECT_EQ(deriveText(model(""), 1), "AC");  // default depth 1 (cpfg)
  EXPECT_EQ(deriveText(model("maximum depth: 1\n"), 1), "AC");
  EXPECT_EQ(deriveText(model("maximum depth: 2\n"), 1), "AD");
  EXPECT_EQ(deriveText(model("maximum depth: 3\n"), 1), "AE");
  EXPECT_EQ(deriveText(model("maximum depth: 9\n"), 1), "AE");
  // Step 2 with depth 2 starts from AD: A -> AB, D copied: ABD. Decomposition
  // rewrites in parallel: pass 1 B -> C, D -> E: ACE; pass 2 C -> D: ADE.
  EXPECT_EQ(deriveText(model("maximum depth: 2\n"), 2), "ADE");
}

// Parametric decomposition with a recursive production (cpfg's usual use:
// split a module into pieces until a condition stops it).
//   S(3): pass 1 -> F S(2), pass 2 -> F F S(1), pass 3 -> F F F S(0), pass 4: S(0) is kept.
TEST(DeriveDecomposition, ParametricRecursion) {
  const std::string model =
      "Axiom: X\nX --> S(3)\ndecomposition\nmaximum depth: 10\nS(n) : n > 0 --> F S(n-1)\n";
  EXPECT_EQ(deriveText(model, 1), "FFFS(0)");
}

// Decomposition productions may have contexts; they see the string of the
// pass they rewrite. A -> AB; decomposition A < B -> C: after step 1 the
// string AB becomes AC; at step 2, A -> AB and C is copied: ABC -> ACC.
TEST(DeriveDecomposition, ContextInTheDecomposition) {
  EXPECT_EQ(deriveText("Axiom: A\nA --> AB\ndecomposition\nA < B --> C\n", 2), "ACC");
  EXPECT_EQ(deriveText("Axiom: A\nA --> BA\ndecomposition\nA < B --> C\n", 2), "BBA");
}

// The module limit also holds inside the decomposition passes. B -> BB with
// depth 10 doubles ten times per step: the axiom B becomes 1024 B at step 0,
// and step 1's first pass would make 2048.
TEST(DeriveDecomposition, BudgetIsCheckedInDecompositionPasses) {
  LSystem l = LSystem::fromText("Axiom: B\nA --> A\ndecomposition\nmaximum depth: 10\nB --> BB\n");
  DeriveOptions o;
  o.iterations = 0;
  EXPECT_EQ(derive(l, o).size(), 1024u);
  o.iterations = 2;
  o.max_modules = 2000;
  try {
    derive(l, o);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("step 1"), std::string::npos) << m;
    EXPECT_NE(m.find("2048"), std::string::npos) << m;
  }
}

// Homomorphism productions are for drawing only: derive() ignores them.
TEST(DeriveHomomorphism, DoesNotChangeTheDerivedString) {
  const std::string base = "Axiom: A(1)\nA(x) --> A(x+1)[B(x)]A(x*2)\n";
  const std::string with = base + "homomorphism\nmaximum depth: 3\nA(x) --> F(x)+F(x)\nB(x) --> G(x)\n";
  for (int n = 0; n <= 4; ++n) {
    DeriveStats s1, s2;
    EXPECT_EQ(deriveText(base, n, 1, &s1), deriveText(with, n, 1, &s2)) << n;
    EXPECT_EQ(s1.step_modules, s2.step_modules);
  }
}

// '%' removes itself and the rest of its branch, up to (not including) the ']'
// closing the branch, or to the end of the string at the top level.
TEST(DeriveCut, RemovesTheRestOfTheBranch) {
  EXPECT_EQ(deriveText("Axiom: X\nX --> A[B%C[D]E]F\n", 1), "A[B]F");
  EXPECT_EQ(deriveText("Axiom: X\nX --> AB%CD[E]F\n", 1), "AB");
  EXPECT_EQ(deriveText("Axiom: X\nX --> A[B[C%D]E%F]G\n", 1), "A[B[C]E]G");
  // Produced inside a branch by a production: F[A]F[B]F with A -> % cuts A's branch only.
  EXPECT_EQ(deriveText("Axiom: F[A]F[BA]F\nA --> %\n", 1), "F[]F[B]F");
  // Parameters of the kept modules survive the cut.
  EXPECT_EQ(deriveText("Axiom: X\nX --> A(1)[B(2)%C(3)]D(4)%E(5)\n", 1), "A(1)[B(2)]D(4)");
  // Cut modules are gone before the next step: nothing grows from them.
  DeriveStats stats;
  EXPECT_EQ(deriveText("Axiom: A\nA --> B[%A]A\n", 3, 1, &stats), "B[]B[]B[]A");
  EXPECT_EQ(stats.step_modules, (std::vector<uint64_t>{4, 7, 10}));
}

// ---------------------------------------------------------------------------
// Memory budget.

TEST(DeriveBudget, MaxModulesNamesTheStepAndProjectedSize) {
  // A -> AA doubles: step 4 would produce 16 modules, over 10.
  LSystem l = LSystem::fromText("Axiom: A\nA --> AA\n");
  DeriveOptions o;
  o.iterations = 6;
  o.max_modules = 10;
  try {
    derive(l, o);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("step 4"), std::string::npos) << m;
    EXPECT_NE(m.find("16"), std::string::npos) << m;
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
  }
  // Exactly at the limit is allowed.
  o.iterations = 3;
  o.max_modules = 8;
  EXPECT_EQ(derive(l, o).size(), 8u);

  // The parametric (generic) path checks too: A(x) -> A(x)A(x+1)A(x+2), 3^k.
  LSystem p = LSystem::fromText("Axiom: A(0)\nA(x) --> A(x)A(x+1)A(x+2)\n");
  o.iterations = 5;
  o.max_modules = 100;
  try {
    derive(p, o);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("step 5"), std::string::npos) << m;
    EXPECT_NE(m.find("243"), std::string::npos) << m;
  }
}

// Sizes are 64-bit: 65536 A's each rewritten to 65536 A's project 2^32
// modules (0 in 32-bit arithmetic). The error must come before allocating
// 4 GiB (which under ASan would not survive), with the exact 64-bit count.
TEST(DeriveBudget, HugeProjectionStopsBeforeAllocating) {
  const std::string a16 = repeat("A", 65536);
  LSystem l = LSystem::fromText("Axiom: " + a16 + "\nA --> " + a16 + "\n");
  DeriveOptions o;
  o.iterations = 1;
  o.max_modules = 100000;  // above the 65536-module axiom, which counts too (issue 16)
  try {
    derive(l, o);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("step 1"), std::string::npos) << m;
    EXPECT_NE(m.find("4294967296"), std::string::npos) << m;
  }
  // No module limit: the memory budget stops it, with the same projection.
  o.max_modules = 0;
  o.memory_budget_bytes = uint64_t{1} << 30;
  try {
    derive(l, o);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("step 1"), std::string::npos) << m;
    EXPECT_NE(m.find("4294967296"), std::string::npos) << m;
  }
  // Parametric: 2^32 modules with 4 parameters each (64 GiB of floats).
  LSystem p = LSystem::fromText("Axiom: " + a16 + "\nA --> " + repeat("B(1,2,3,4)", 65536) + "\n");
  o.max_modules = 1u << 20;
  o.memory_budget_bytes = 0;  // half the RAM: far below the projection
  try {
    derive(p, o);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("4294967296"), std::string::npos) << m;
  }
}

// The memory budget (bytes) stops a doubling string at the first step whose
// projection does not fit; the step before it fitted with at least one byte
// per module.
TEST(DeriveBudget, MemoryBudgetStopsAtAStepThatDoesNotFit) {
  LSystem l = LSystem::fromText("Axiom: A\nA --> AA\n");
  DeriveOptions o;
  o.iterations = 30;
  o.memory_budget_bytes = 1 << 20;
  try {
    derive(l, o);
    FAIL() << "no ResourceError";
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    const size_t at = m.find("step ");
    ASSERT_NE(at, std::string::npos) << m;
    const int step = std::stoi(m.substr(at + 5));
    EXPECT_GE(step, 15) << m;  // 2^14 modules take far less than 1 MiB however stored
    EXPECT_LE(step, 21) << m;  // 2^21 modules need at least 2 MiB
    EXPECT_NE(m.find(std::to_string(uint64_t{1} << step)), std::string::npos) << m;
  }
}

TEST(DeriveBudget, ProgressAndNegativeIterations) {
  LSystem l = LSystem::fromText("derivation length: 3\nAxiom: A\nA --> AA\n");
  DeriveOptions o;
  std::vector<uint64_t> seen;
  o.progress = [&](int step, int total, uint64_t modules) {
    EXPECT_EQ(step, static_cast<int>(seen.size()) + 1);
    EXPECT_EQ(total, 3);  // the file's derivation length is the default
    seen.push_back(modules);
  };
  EXPECT_EQ(derive(l, o).size(), 8u);
  EXPECT_EQ(seen, (std::vector<uint64_t>{2, 4, 8}));
  o.iterations = -1;
  EXPECT_THROW(derive(l, o), Error);
}

// A D0L derivation takes its last steps in one jump (derive.cpp); a budget
// failure inside the jump still reports the steps before it and names the
// step that does not fit, as single steps would.
TEST(DeriveBudget, FailureInsideAD0LJumpReportsTheStepsBefore) {
  LSystem l = LSystem::fromText("derivation length: 6\nAxiom: A\nA --> AA\n");
  for (Backend backend : {Backend::kSerial, Backend::kCpu}) {
    if (!backendAvailable(backend)) continue;
    DeriveOptions o;
    o.execution.backend = backend;
    o.max_modules = 20;  // steps give 2, 4, 8, 16, 32: step 5 fails
    std::vector<uint64_t> seen;
    o.progress = [&](int, int, uint64_t modules) { seen.push_back(modules); };
    try {
      (void)derive(l, o);
      FAIL() << "no ResourceError";
    } catch (const ResourceError& e) {
      EXPECT_NE(std::string(e.what()).find("step 5"), std::string::npos) << e.what();
    }
    EXPECT_EQ(seen, (std::vector<uint64_t>{2, 4, 8, 16}));
  }
}

}  // namespace
}  // namespace procgen
