// Brute-force references for the serial L-system engine, written from the
// cpfg rules without procgen's tables, matcher or passes: bracket-aware
// contexts, first-match rewriting of non-parametric deterministic grammars,
// and the '%' cut. The parity suite compares every other backend with serial;
// these are what serial itself is compared with.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "procgen/lsystem.hpp"

namespace procgen::test {

using IgnoredFn = std::function<bool(char)>;

/// cpfg left context of s[i]: walk back, skip ignored letters and whole
/// branches that close before i, leave the current branch through its '['.
/// 0 when there is none.
inline char leftContext(const std::string& s, size_t i, const IgnoredFn& ignored) {
  int depth = 0;
  for (size_t j = i; j-- > 0;) {
    const char c = s[j];
    if (c == ']') {
      ++depth;
    } else if (c == '[') {
      if (depth > 0) --depth;
    } else if (depth == 0 && !ignored(c)) {
      return c;
    }
  }
  return 0;
}

/// cpfg right context of s[i]: walk forward, skip ignored letters and lateral
/// branches; nothing past the ']' that closes the current branch.
inline char rightContext(const std::string& s, size_t i, const IgnoredFn& ignored) {
  int depth = 0;
  for (size_t j = i + 1; j < s.size(); ++j) {
    const char c = s[j];
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (depth == 0) return 0;
      --depth;
    } else if (depth == 0 && !ignored(c)) {
      return c;
    }
  }
  return 0;
}

/// '%' removes itself and the rest of its branch: everything up to (not
/// including) the ']' that closes the branch it is in, or to the end. The
/// indices of the modules kept, in order.
inline std::vector<size_t> cutKeptIndices(const std::string& s) {
  std::vector<size_t> kept;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      kept.push_back(i);
      continue;
    }
    int depth = 0;
    size_t j = i + 1;
    for (; j < s.size(); ++j) {
      if (s[j] == '[') ++depth;
      if (s[j] == ']' && depth-- == 0) break;
    }
    i = j - 1;  // s[j] (the closing ']') is kept
  }
  return kept;
}

/// The string after the cut.
inline std::string cutReference(const std::string& s) {
  std::string out;
  for (size_t i : cutKeptIndices(s)) out.push_back(s[i]);
  return out;
}

/// One production of a non-parametric deterministic L-system: `left < pred >
/// right --> succ` (0: no context).
struct ReferenceRule {
  char left = 0, pred = 0, right = 0;
  std::string succ;
};

/// A random non-parametric deterministic context-sensitive L-system over
/// A–D with turtle symbols, brackets and '%', optionally `#ignore: +-F`, as
/// rules and as text in the .l language.
struct ReferenceGrammar {
  std::string axiom;
  std::vector<ReferenceRule> rules;
  bool ignore_turtle = false;

  bool ignored(char c) const { return ignore_turtle && (c == '+' || c == '-' || c == 'F'); }

  std::string text() const {
    std::string t = ignore_turtle ? "#ignore: +-F\n" : "";
    t += "Lsystem: 1\nderivation length: 1\nAxiom: " + axiom + "\n";
    for (const ReferenceRule& r : rules) {
      if (r.left) t += std::string(1, r.left) + " < ";
      t += r.pred;
      if (r.right) t += std::string(" > ") + r.right;
      t += " --> " + (r.succ.empty() ? std::string("*") : r.succ) + "\n";
    }
    return t + "endlsystem\n";
  }

  /// One derivation step: every module rewritten by the first rule whose
  /// predecessor and contexts match (all contexts read the old string), then
  /// the cut.
  std::string step(const std::string& s) const {
    const IgnoredFn ig = [this](char c) { return ignored(c); };
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      const ReferenceRule* chosen = nullptr;
      for (const ReferenceRule& r : rules) {
        if (r.pred != s[i]) continue;
        if (r.left && leftContext(s, i, ig) != r.left) continue;
        if (r.right && rightContext(s, i, ig) != r.right) continue;
        chosen = &r;
        break;
      }
      out += chosen ? chosen->succ : std::string(1, s[i]);
    }
    return cutReference(out);
  }

  static ReferenceGrammar random(std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto word = [&](int min, int max, bool allow_cut) {
      std::string s;
      int depth = 0;
      const int n = pick(min, max);
      for (int k = 0; k < n; ++k) {
        const int r = pick(0, 99);
        if (r < 15) {
          s += '[';
          ++depth;
        } else if (r < 25 && depth > 0) {
          s += ']';
          --depth;
        } else if (r < 28 && allow_cut) {
          s += '%';
        } else if (r < 65) {
          s += "ABCD"[pick(0, 3)];
        } else if (r < 80) {
          s += 'F';
        } else {
          s += "+-"[pick(0, 1)];
        }
      }
      while (depth-- > 0) s += ']';
      return s;
    };
    ReferenceGrammar g;
    g.ignore_turtle = pick(0, 1) == 1;
    g.axiom = word(3, 8, false) + "A";
    for (char pred : std::string("ABCD")) {
      const int alternatives = pick(1, 3);
      for (int a = 0; a < alternatives; ++a) {
        ReferenceRule r;
        r.pred = pred;
        const bool specific = a + 1 < alternatives;  // a general rule last
        if (specific && pick(0, 1)) r.left = "ABCD"[pick(0, 3)];
        if (specific && (!r.left || pick(0, 1))) r.right = "ABCD"[pick(0, 3)];
        r.succ = pick(0, 9) == 0 ? std::string() : word(1, 5, true);
        g.rules.push_back(r);
      }
    }
    return g;
  }
};

}  // namespace procgen::test
