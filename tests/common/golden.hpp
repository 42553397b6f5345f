// Golden files (STYLE.md practice 8): small known answers committed under
// tests/golden/, produced only from the serial backend, compared by the tests,
// and regenerated only through an explicit switch:
//
//   PROCGEN_UPDATE_GOLDEN=1 build/tests/procgen_tests --gtest_filter='Golden*'
//
// rewrites every golden file a test compares against (then review the diff
// with git before committing). Goldens guard against unintended changes; they
// are in addition to the independent references, never instead of them.
#pragma once

#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_run.hpp"

namespace procgen::test {

/// tests/golden/ of the source tree.
inline std::filesystem::path goldenDir() { return std::filesystem::path(PROCGEN_SOURCE_DIR) / "tests" / "golden"; }

/// Whether this run regenerates the golden files (PROCGEN_UPDATE_GOLDEN=1).
inline bool updatingGolden() {
  const char* v = std::getenv("PROCGEN_UPDATE_GOLDEN");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

/// 64-bit FNV-1a over bytes, chainable through `h`.
inline uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

namespace golden_detail {

inline void writeFile(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

/// The first line where `a` and `b` differ, both versions shown.
inline std::string firstDifference(const std::string& got, const std::string& want) {
  std::istringstream g(got), w(want);
  std::string gl, wl;
  for (int line = 1;; ++line) {
    const bool more_g = static_cast<bool>(std::getline(g, gl));
    const bool more_w = static_cast<bool>(std::getline(w, wl));
    if (!more_g && !more_w) return "identical lines (line endings differ)";
    if (!more_g || !more_w || gl != wl)
      return "line " + std::to_string(line) + ":\n  golden: " + (more_w ? wl : "<end>") +
             "\n  now:    " + (more_g ? gl : "<end>");
  }
}

}  // namespace golden_detail

/// Compares `actual` with tests/golden/`name`; with PROCGEN_UPDATE_GOLDEN=1
/// writes it there instead. On a mismatch the new text is left beside the
/// test's working directory as `<file>.actual` for a diff.
inline void expectGoldenText(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = goldenDir() / name;
  if (updatingGolden()) {
    golden_detail::writeFile(path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; generate it with PROCGEN_UPDATE_GOLDEN=1 (tests/README.md)";
  const std::string want = slurp(path);
  if (want != actual) {
    const std::filesystem::path out = std::filesystem::path(path.filename().string() + ".actual");
    golden_detail::writeFile(std::filesystem::absolute(out), actual);
    ADD_FAILURE() << name << " differs from the golden file (" << golden_detail::firstDifference(actual, want)
                  << ")\nnew output: " << std::filesystem::absolute(out)
                  << "\nif the change is intended: PROCGEN_UPDATE_GOLDEN=1 (tests/README.md)";
  }
}

/// An RGBA image decoded from PNG (8 bits per channel).
struct GoldenImage {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgba;
  bool operator==(const GoldenImage&) const = default;
};

inline GoldenImage decodePng(const std::filesystem::path& path) {
  GoldenImage img;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.string().c_str())) return img;
  image.format = PNG_FORMAT_RGBA;
  img.rgba.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, img.rgba.data(), 0, nullptr)) return GoldenImage{};
  img.width = image.width;
  img.height = image.height;
  return img;
}

/// Compares the pixels of the PNG at `produced` with tests/golden/`name`
/// (pixels, not bytes: the encoder may change its compression freely); with
/// PROCGEN_UPDATE_GOLDEN=1 copies it there instead.
inline void expectGoldenPng(const std::string& name, const std::filesystem::path& produced) {
  const std::filesystem::path path = goldenDir() / name;
  if (updatingGolden()) {
    golden_detail::writeFile(path, slurp(produced));
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; generate it with PROCGEN_UPDATE_GOLDEN=1 (tests/README.md)";
  const GoldenImage want = decodePng(path), got = decodePng(produced);
  ASSERT_GT(want.width, 0u) << "cannot decode " << path;
  ASSERT_GT(got.width, 0u) << "cannot decode " << produced;
  if (!(got == want)) {
    size_t differing = 0;
    for (size_t i = 0; i < std::min(got.rgba.size(), want.rgba.size()); i += 4)
      differing += std::memcmp(&got.rgba[i], &want.rgba[i], 4) != 0;
    const std::filesystem::path out = std::filesystem::absolute(path.filename().string() + ".actual.png");
    golden_detail::writeFile(out, slurp(produced));
    ADD_FAILURE() << name << ": " << got.width << "x" << got.height << " vs golden " << want.width << "x"
                  << want.height << ", " << differing << " pixels differ; new image: " << out
                  << "\nif the change is intended: PROCGEN_UPDATE_GOLDEN=1 (tests/README.md)";
  }
}

}  // namespace procgen::test
