// The `procgen noise` option parser on its own (the code the command and the
// fuzz target run): the fuzz corpus resolves or is refused with an Error, and
// the documented defaults and conversions hold.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "common/cli_run.hpp"
#include "noise_options.hpp"
#include "procgen/error.hpp"

namespace {

using procgen::cli::NoiseArgs;
using procgen::cli::NoiseJob;

// Parses `line` as the words after `procgen noise`; throws what the parser throws.
NoiseJob parse(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  std::vector<std::string> reversed(tokens.rbegin(), tokens.rend());
  CLI::App app{"test"};
  NoiseArgs args;
  procgen::cli::addNoiseOptions(app, args);
  app.parse(reversed);
  return procgen::cli::resolveNoiseArgs(args);
}

TEST(NoiseOptions, DefaultsAreA128CubedFbmVolume) {
  const NoiseJob job = parse("perlin");
  EXPECT_EQ(job.params.dims, 3);
  EXPECT_EQ(job.grid.size, (std::array<uint64_t, 4>{128, 128, 128, 1}));
  EXPECT_EQ(job.params.fractal, procgen::FractalType::kFbm);
  EXPECT_EQ(job.grid_bytes, 128u * 128u * 128u * 4u);
  EXPECT_TRUE(job.close_boundary);
  EXPECT_EQ(job.threshold, 0.0f);
}

TEST(NoiseOptions, SizeOriginAndOutputs) {
  const NoiseJob job = parse("simplex --dims 2 --size 1024x512 --origin -1.5,2e3 -o a.png -o b.RAW -o c.glb");
  EXPECT_EQ(job.params.dims, 2);
  EXPECT_EQ(job.grid.size, (std::array<uint64_t, 4>{1024, 512, 1, 1}));
  EXPECT_EQ(job.grid.origin[0], -1.5);
  EXPECT_EQ(job.grid.origin[1], 2000.0);
  ASSERT_EQ(job.outputs.size(), 3u);
  EXPECT_EQ(job.outputs[0].kind, procgen::cli::NoiseOutput::Kind::kImage);
  EXPECT_EQ(job.outputs[1].kind, procgen::cli::NoiseOutput::Kind::kRaw);
  EXPECT_EQ(job.outputs[2].kind, procgen::cli::NoiseOutput::Kind::kMesh);
  EXPECT_TRUE(job.needsMesh());
  EXPECT_DOUBLE_EQ(job.height_scale, 0.15 * 1024);
}

TEST(NoiseOptions, FuzzCorpusResolvesOrIsRefused) {
  const std::filesystem::path dir = std::filesystem::path(PROCGEN_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "noise_options";
  int accepted = 0, refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string text = procgen::test::slurp(entry.path());
    try {
      (void)parse(text);
      ++accepted;
    } catch (const CLI::Error&) {
      ++refused;
    } catch (const procgen::Error&) {
      ++refused;
    }
  }
  EXPECT_GE(accepted, 6);
  EXPECT_GE(refused, 1);  // errors.txt
}

}  // namespace
