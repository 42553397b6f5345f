// The .vdb writer module (procgen_vdb.so): the one piece of procgen that
// links OpenVDB. libprocgen loads it with dlopen on the first .vdb write
// (vdb_writer.cpp), so that no other run pays for loading libopenvdb and its
// dependencies; the interface is the C entry point of vdb_module_abi.hpp.
#include <cstdio>
#include <exception>
#include <new>
#include <ostream>
#include <streambuf>
#include <type_traits>

#include <openvdb/io/Stream.h>
#include <openvdb/openvdb.h>
#include <openvdb/tools/Dense.h>

#include "io/volumes/vdb_module_abi.hpp"

namespace {

/// Thrown by the stream buffer when the host's sink refused bytes: the host
/// holds the reason, so the entry point returns PROCGEN_VDB_SINK_FAILED.
struct SinkFailed {};

/// A std::streambuf over the host's callback: OpenVDB writes to a
/// std::ostream, and this streams it out without a copy (the host buffers).
class CallbackStreamBuf final : public std::streambuf {
 public:
  CallbackStreamBuf(procgen_vdb_write_bytes write_bytes, void* context)
      : write_bytes_(write_bytes), context_(context) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n > 0 && write_bytes_(context_, s, size_t(n)) != 0) throw SinkFailed{};
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      const char ch = traits_type::to_char_type(c);
      xsputn(&ch, 1);
    }
    return traits_type::not_eof(c);
  }

 private:
  procgen_vdb_write_bytes write_bytes_;
  void* context_;
};

void writeGrid(const procgen_vdb_volume& volume, const char* grid_name, const char* const* metadata_keys,
               const char* const* metadata_values, size_t metadata_count, procgen_vdb_write_bytes write_bytes,
               void* context) {
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
  grid->setName(grid_name);
  for (size_t i = 0; i < metadata_count; ++i)
    grid->insertMeta(metadata_keys[i], openvdb::StringMetadata(metadata_values[i]));

  CallbackStreamBuf buffer(write_bytes, context);
  std::ostream stream(&buffer);
  // A SinkFailed thrown by the buffer sets badbit; with badbit in
  // exceptions() the stream rethrows it as it is.
  stream.exceptions(std::ios::badbit);
  openvdb::io::Stream(stream).write(openvdb::GridCPtrVec{grid});
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int procgen_vdb_write_v1(
    const procgen_vdb_volume* volume, const char* grid_name, const char* const* metadata_keys,
    const char* const* metadata_values, size_t metadata_count, procgen_vdb_write_bytes write_bytes, void* context,
    char* error, size_t error_capacity) {
  try {
    writeGrid(*volume, grid_name, metadata_keys, metadata_values, metadata_count, write_bytes, context);
    return PROCGEN_VDB_OK;
  } catch (const SinkFailed&) {
    return PROCGEN_VDB_SINK_FAILED;
  } catch (const std::bad_alloc&) {
    return PROCGEN_VDB_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    if (error_capacity > 0) std::snprintf(error, error_capacity, "%s", e.what());
  } catch (...) {
    if (error_capacity > 0) std::snprintf(error, error_capacity, "unknown exception in OpenVDB");
  }
  return PROCGEN_VDB_FAILED;
}

static_assert(std::is_same_v<decltype(&procgen_vdb_write_v1), procgen_vdb_write_fn>,
              "the entry point must match vdb_module_abi.hpp");
