// Volumes as OpenVDB files (procgen/volume.hpp, writeVolumeVdb). Built only
// when CMake found Debian's libopenvdb-dev (PROCGEN_HAVE_OPENVDB); otherwise
// the functions say the build has no OpenVDB.
#include <filesystem>
#include <streambuf>
#include <string>

#include "io/output_file.hpp"
#include "io/volumes/volume_check.hpp"
#include "procgen/error.hpp"
#include "procgen/volume.hpp"

#if PROCGEN_HAVE_OPENVDB
#include <openvdb/io/Stream.h>
#include <openvdb/openvdb.h>
#include <openvdb/tools/Dense.h>
#endif

namespace procgen {

#if PROCGEN_HAVE_OPENVDB
namespace {

/// A std::streambuf over a ByteSink: OpenVDB writes to a std::ostream, and
/// this lets it stream into a file or memory sink without a copy in between.
class SinkStreamBuf final : public std::streambuf {
 public:
  explicit SinkStreamBuf(ByteSink& sink) : out_(sink) {}
  void close() { out_.close(); }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    out_.write(s, static_cast<size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      const char ch = traits_type::to_char_type(c);
      out_.write(&ch, 1);
    }
    return traits_type::not_eof(c);
  }

 private:
  io::OutputStream out_;
};

}  // namespace

bool volumeVdbAvailable() { return true; }

void writeVolumeVdb(const VolumeView& volume, ByteSink& sink, const VdbWriteOptions& options) {
  (void)detail::checkedVolumeCount(volume);
  for (uint64_t d : volume.dims)
    if (d > uint64_t(std::numeric_limits<int32_t>::max()))
      throw Error("volume: OpenVDB coordinates are 32-bit; every dimension must be below 2^31", ExitCode::kUsage);
  openvdb::initialize();  // registers the grid types; idempotent and thread-safe

  using Dense = openvdb::tools::Dense<float, openvdb::tools::LayoutXYZ>;  // x fastest, as VolumeView
  const openvdb::CoordBBox box(openvdb::Coord(0, 0, 0),
                               openvdb::Coord(int32_t(volume.dims[0]) - 1, int32_t(volume.dims[1]) - 1,
                                              int32_t(volume.dims[2]) - 1));
  // Dense takes a mutable pointer but copyFromDense only reads it.
  const Dense dense(box, const_cast<float*>(volume.values));
  openvdb::FloatGrid::Ptr grid = openvdb::FloatGrid::create(/*background=*/0.0f);
  openvdb::tools::copyFromDense(dense, grid->tree(), /*tolerance=*/0.0f);

  openvdb::math::Mat4d voxel_to_world = openvdb::math::Mat4d::identity();
  voxel_to_world.preScale(openvdb::Vec3d(volume.spacing[0], volume.spacing[1], volume.spacing[2]));
  voxel_to_world.postTranslate(openvdb::Vec3d(volume.origin[0], volume.origin[1], volume.origin[2]));
  grid->setTransform(openvdb::math::Transform::createLinearTransform(voxel_to_world));
  grid->setName(options.grid_name);
  for (const auto& [key, value] : options.metadata) grid->insertMeta(key, openvdb::StringMetadata(value));

  SinkStreamBuf buffer(sink);
  std::ostream stream(&buffer);
  stream.exceptions(std::ios::badbit);  // a failing sink throws OutputError through the buffer
  openvdb::io::Stream(stream).write(openvdb::GridCPtrVec{grid});
  buffer.close();
}

#else

bool volumeVdbAvailable() { return false; }

void writeVolumeVdb(const VolumeView& volume, ByteSink&, const VdbWriteOptions&) {
  (void)detail::checkedVolumeCount(volume);
  throw Error("cannot write .vdb: this build has no OpenVDB (install libopenvdb-dev and rebuild); write .raw and "
              "its .json sidecar instead",
              ExitCode::kUsage);
}

#endif

void writeVolumeVdb(const VolumeView& volume, const std::filesystem::path& path, const VdbWriteOptions& options) {
  if (!volumeVdbAvailable()) {
    MemorySink refused;  // throws the same message without creating the file
    writeVolumeVdb(volume, refused, options);
  }
  io::writeToFile(path, [&](ByteSink& sink) { writeVolumeVdb(volume, sink, options); });
}

}  // namespace procgen
