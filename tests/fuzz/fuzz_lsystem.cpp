// libFuzzer target for the L-system front end (src/lsystem/parser.cpp): any
// byte string must either compile or throw procgen::Error; every other
// exception, crash, sanitizer report or hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    procgen::LSystem lsystem = procgen::LSystem::fromText(text, "fuzz.l");
    (void)lsystem.axiom().size();
  } catch (const procgen::Error&) {
  }
  try {
    procgen::ViewSettings view;
    procgen::applyViewFile(text, "fuzz.v", view);
  } catch (const procgen::Error&) {
  }
  try {
    (void)procgen::parseModuleString(text);
  } catch (const procgen::Error&) {
  }
  return 0;
}
