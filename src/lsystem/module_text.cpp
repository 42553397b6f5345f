// Canonical text of a module string (`F(1.5,2)`, shortest round-trip floats)
// and its 64-bit FNV-1a hash, computed by one emitter so the two never differ.
#include <charconv>
#include <cstring>
#include <string>

#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

template <typename Sink>
void emitText(const ModuleString& s, Sink&& sink) {
  char buf[32];
  const uint64_t n = s.size();
  const bool parametric = s.parametric();
  for (uint64_t i = 0; i < n; ++i) {
    char c = static_cast<char>(s.symbols[i]);
    sink(&c, 1);
    if (!parametric) continue;
    uint64_t b = s.param_offsets[i], e = s.param_offsets[i + 1];
    if (b == e) continue;
    sink("(", 1);
    for (uint64_t k = b; k < e; ++k) {
      if (k != b) sink(",", 1);
      auto r = std::to_chars(buf, buf + sizeof buf, s.params[k]);
      sink(buf, static_cast<size_t>(r.ptr - buf));
    }
    sink(")", 1);
  }
}

}  // namespace

std::string toText(const ModuleString& s) {
  std::string out;
  out.reserve(s.size() + 6 * s.params.size());
  emitText(s, [&](const char* p, size_t len) { out.append(p, len); });
  return out;
}

uint64_t stringHash(const ModuleString& s) { return stringHash(s, 1469598103934665603ull); }  // FNV-1a 64 basis

uint64_t textHash(std::string_view text, uint64_t h) {
  for (const char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;  // FNV-1a 64 prime
  }
  return h;
}

uint64_t stringHash(const ModuleString& s, uint64_t h) {
  emitText(s, [&](const char* p, size_t len) { h = textHash({p, len}, h); });
  return h;
}

}  // namespace procgen
