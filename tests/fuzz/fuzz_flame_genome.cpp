// libFuzzer target for the flam3 genome reader (src/flame/genome_reader.cpp,
// src/flame/palettes.cpp, src/flame/xml_source.cpp): any byte string must
// either give genomes or throw procgen::Error; every other exception, crash,
// sanitizer report, hang or runaway allocation is a bug. Both settings of
// skip_unknown run; palette=N reads Debian's flam3-palettes.xml when
// installed (the error path otherwise).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "procgen/error.hpp"
#include "procgen/flame.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool skip_unknown : {false, true}) {
    procgen::FlameReadOptions options;
    options.skip_unknown = skip_unknown;
    size_t warnings = 0;
    options.warn = [&](const std::string&) { ++warnings; };
    try {
      const auto genomes = procgen::parseFlameGenomes(text, "fuzz.flam3", options);
      size_t xforms = 0;
      for (const auto& g : genomes) {
        xforms += g.xforms.size();
        for (const auto& xf : g.xforms)
          for (const auto& term : xf.variations)
            if (term.index < 0 || term.index >= procgen::kFlameVariationCount) __builtin_trap();
        for (const auto& entry : g.palette)
          for (double c : entry)
            if (!(c == c)) __builtin_trap();  // no NaN reaches a palette
      }
      (void)xforms;
    } catch (const procgen::Error&) {
    }
  }
  return 0;
}
