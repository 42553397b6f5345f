// OpenVDB output (procgen/volume.hpp writeVolumeVdb, `procgen noise -o X.vdb`):
// what procgen writes is read back with OpenVDB's own reader — every voxel
// value bit for bit, the voxel-to-world transform, the grid's name and
// metadata — and `procgen noise` writes the same values to .vdb as to .raw.
// Built with OpenVDB only (tests/CMakeLists.txt); without it the CLI test in
// cli_noise_test.cpp checks that .vdb is refused.
#include <gtest/gtest.h>
#include <openvdb/io/Stream.h>
#include <openvdb/openvdb.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_run.hpp"
#include "procgen/error.hpp"
#include "procgen/output.hpp"
#include "procgen/volume.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::test::runProcgen;
using procgen::test::slurp;

// The one float grid of a .vdb byte stream.
openvdb::FloatGrid::Ptr readOnlyGrid(const std::string& bytes) {
  openvdb::initialize();
  std::istringstream in(bytes, std::ios::binary);
  openvdb::io::Stream stream(in);
  openvdb::GridPtrVecPtr grids = stream.getGrids();
  EXPECT_EQ(grids->size(), 1u);
  if (grids->empty()) return nullptr;
  return openvdb::gridPtrCast<openvdb::FloatGrid>(grids->front());
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

TEST(VdbWriter, EveryVoxelTransformNameAndMetadataReadBack) {
  ASSERT_TRUE(procgen::volumeVdbAvailable());
  const uint64_t nx = 7, ny = 5, nz = 3;
  std::vector<float> values(nx * ny * nz);
  uint64_t nonzero = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    // Distinct values of both signs, exact zeros (inactive background voxels)
    // and one huge and one tiny value: nothing may be rounded or dropped.
    values[i] = i % 5 == 0 ? 0.0f : float(std::sin(double(i) * 1.7)) * (i % 7 == 0 ? 3e30f : 1.0f);
    if (i == 11) values[i] = 1e-40f;  // subnormal
    nonzero += values[i] != 0.0f;
  }
  const procgen::VolumeView view{values.data(), {nx, ny, nz}, {0.5, 2.0, 0.25}, {-3.0, 10.0, 0.125}};
  procgen::VdbWriteOptions options;
  options.grid_name = "field";
  options.metadata = {{"source", "unit test"}};
  procgen::MemorySink sink;
  procgen::writeVolumeVdb(view, sink, options);
  const std::string bytes(sink.bytes().begin(), sink.bytes().end());

  openvdb::FloatGrid::Ptr grid = readOnlyGrid(bytes);
  ASSERT_TRUE(grid);
  EXPECT_EQ(grid->getName(), "field");
  EXPECT_EQ(grid->metaValue<std::string>("source"), "unit test");
  EXPECT_EQ(grid->activeVoxelCount(), nonzero);
  auto acc = grid->getConstAccessor();
  for (uint64_t z = 0; z < nz; ++z)
    for (uint64_t y = 0; y < ny; ++y)
      for (uint64_t x = 0; x < nx; ++x) {
        const float want = values[x + nx * (y + ny * z)];
        const openvdb::Coord c{int(x), int(y), int(z)};
        ASSERT_EQ(bits(acc.getValue(c)), bits(want)) << x << ' ' << y << ' ' << z;
        // Voxel centres sit where the raw sidecar puts the samples: origin + index * spacing.
        const openvdb::Vec3d w = grid->transform().indexToWorld(c);
        EXPECT_DOUBLE_EQ(w.x(), -3.0 + 0.5 * double(x));
        EXPECT_DOUBLE_EQ(w.y(), 10.0 + 2.0 * double(y));
        EXPECT_DOUBLE_EQ(w.z(), 0.125 + 0.25 * double(z));
      }
  // Outside the volume: the background.
  EXPECT_EQ(acc.getValue(openvdb::Coord(int(nx), 0, 0)), 0.0f);
}

TEST(VdbWriter, BadViewsAndUnwritablePathsThrowAndLeaveNoFile) {
  const fs::path dir = fs::temp_directory_path() / ("procgen_vdb_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  float one = 1.0f;
  const procgen::VolumeView zero_dim{&one, {1, 0, 1}};
  EXPECT_THROW(procgen::writeVolumeVdb(zero_dim, dir / "a.vdb"), procgen::Error);
  EXPECT_FALSE(fs::exists(dir / "a.vdb"));
  const procgen::VolumeView bad_spacing{&one, {1, 1, 1}, {1.0, NAN, 1.0}};
  EXPECT_THROW(procgen::writeVolumeVdb(bad_spacing, dir / "b.vdb"), procgen::Error);
  const procgen::VolumeView ok{&one, {1, 1, 1}};
  EXPECT_THROW(procgen::writeVolumeVdb(ok, dir / "missing" / "c.vdb"), procgen::OutputError);
  EXPECT_FALSE(fs::exists(dir / "missing"));
  procgen::writeVolumeVdb(ok, dir / "d.vdb");
  EXPECT_TRUE(fs::exists(dir / "d.vdb"));
  // Nothing but the finished file: no temporary left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

class CliNoiseVdb : public procgen::test::ScratchDirTest {};

TEST_F(CliNoiseVdb, TheVdbHoldsTheRawFieldsValuesAtTheRawSamplePositions) {
  const fs::path vdb = dir_ / "t.vdb", raw = dir_ / "t.raw", err = dir_ / "err.txt";
  for (const char* dims : {"--dims 3 --size 9x7x5 --origin 1,2,3", "--dims 2 --size 6x4 --origin 1,2"}) {
    ASSERT_EQ(runProcgen(std::string("noise perlin -q ") + dims + " --step 0.5 --frequency 0.37 -o " +
                             vdb.string() + " -o " + raw.string(),
                         err),
              0)
        << slurp(err);
    const std::string raw_bytes = slurp(raw);
    std::vector<float> field(raw_bytes.size() / 4);
    std::memcpy(field.data(), raw_bytes.data(), field.size() * 4);
    const bool three = std::string(dims).find("--dims 3") != std::string::npos;
    const int nx = three ? 9 : 6, ny = three ? 7 : 4, nz = three ? 5 : 1;
    ASSERT_EQ(field.size(), size_t(nx * ny * nz));

    openvdb::FloatGrid::Ptr grid = readOnlyGrid(slurp(vdb));
    ASSERT_TRUE(grid);
    EXPECT_EQ(grid->getName(), "density");
    EXPECT_NE(grid->metaValue<std::string>("procgen_noise").find("perlin"), std::string::npos);
    auto acc = grid->getConstAccessor();
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
          ASSERT_EQ(bits(acc.getValue(openvdb::Coord(x, y, z))), bits(field[size_t(x + nx * (y + ny * z))]));
        }
    const openvdb::Vec3d w = grid->transform().indexToWorld(openvdb::Coord(2, 1, 0));
    EXPECT_DOUBLE_EQ(w.x(), 1.0 + 2 * 0.5);
    EXPECT_DOUBLE_EQ(w.y(), 2.0 + 1 * 0.5);
  }
}

}  // namespace
