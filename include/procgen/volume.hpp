// procgen volumes: a scalar field on a regular 3D grid written as raw
// little-endian float32 (x fastest, then y, then z) with a JSON sidecar that
// says how to read it, and optionally a NRRD detached header (.nhdr) that
// ParaView, 3D Slicer, ITK and teem open directly. docs/output-formats.md
// describes the files and how to open them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "procgen/output.hpp"

namespace procgen {

/// A caller's volume, read-only: value (x, y, z) is
/// values[x + dims[0] × (y + dims[1] × z)]. Sample (x, y, z) sits at
/// origin + (x, y, z) ⊙ spacing in world units.
struct VolumeView {
  const float* values = nullptr;
  std::array<uint64_t, 3> dims{0, 0, 0};  ///< each >= 1
  std::array<double, 3> spacing{1.0, 1.0, 1.0};  ///< finite, > 0
  std::array<double, 3> origin{0.0, 0.0, 0.0};   ///< finite
};

/// The raw data: dims[0]·dims[1]·dims[2] float32 values, little-endian, in
/// the view's order, no header; then sink.finish(). Throws Error (kUsage) for
/// a bad view (null values, a zero dimension, a size overflowing 64 bits,
/// spacing not finite and positive, origin not finite), OutputError when the
/// sink fails. Complexity: linear; streams the caller's buffer, no copy.
void writeVolumeRaw(const VolumeView& volume, ByteSink& sink);

/// The raw data in memory.
std::vector<uint8_t> encodeVolumeRaw(const VolumeView& volume);

/// The JSON sidecar (one object, keys in this order; docs/output-formats.md):
///   "format": "procgen-volume", "version": 1, "data_file": raw_file_name,
///   "element_type": "float32", "byte_order": "little_endian", "header_bytes": 0,
///   "order": "x fastest, then y, then z", "dims": [nx, ny, nz],
///   "spacing": [sx, sy, sz], "origin": [ox, oy, oz],
///   "value_range": [min, max] of the finite values (null when there is none),
///   "non_finite_values": count of NaN and infinite values.
/// Throws Error (kUsage) for a bad view. Complexity: one pass over the values.
std::string volumeJson(const VolumeView& volume, std::string_view raw_file_name);

/// A NRRD detached header (NRRD0004) pointing at `raw_file_name`: type float,
/// sizes nx ny nz, spacings, space origin, encoding raw, endian little.
std::string volumeNrrdHeader(const VolumeView& volume, std::string_view raw_file_name);

struct VolumeWriteOptions {
  bool nrrd_header = true;  ///< also write NAME.nhdr
};

/// Writes NAME.raw, NAME.json and (by default) NAME.nhdr, NAME being `path`
/// without its extension (so "density.raw", "density.json" and "density" all
/// write density.raw + density.json + density.nhdr); the sidecars name the raw
/// file without directories, so the three can be moved together.
/// Throws like writeVolumeRaw; OutputError when a file cannot be written.
/// Atomic: the files appear together and complete, or none of them
/// (OutputTransaction, procgen/output.hpp).
void writeVolume(const VolumeView& volume, const std::filesystem::path& path,
                 const VolumeWriteOptions& options = {});

/// The files writeVolume(volume, path, options) writes, in order: NAME.raw,
/// NAME.json and (nrrd_header) NAME.nhdr. For callers that must know every
/// output up front (clash checks).
std::vector<std::filesystem::path> volumeFiles(const std::filesystem::path& path,
                                               const VolumeWriteOptions& options = {});

// ---------------------------------------------------------------------------
// OpenVDB (.vdb), when the build found Debian's libopenvdb-dev (optional,
// reported by CMake like TBB): the format Houdini, Blender, Maya, EmberGen
// and every renderer with volumes read.
//
// The writer is a module of its own, procgen_vdb.so, loaded on the first
// .vdb write, so that programs that write none do not load OpenVDB at all.
// It is looked for in $PROCGEN_PLUGIN_DIR when that is set, otherwise beside
// the executable (or shared library) libprocgen is linked into and then in
// ../lib/procgen relative to it (the install tree; CMake's install rule puts
// it there).
// ---------------------------------------------------------------------------

/// True when this build has the .vdb writer (the module is loaded later).
bool volumeVdbAvailable();

/// Loads the .vdb writer module now, if it is not loaded yet; writeVolumeVdb
/// does this itself, a caller calls it to learn of a missing module before a
/// long computation. Throws Error (kUsage) when the build has no OpenVDB,
/// OutputError naming every path tried and the loader's reason when the
/// module cannot be loaded (a failed load is retried by the next call).
/// Thread-safe.
void loadVolumeVdbWriter();

struct VdbWriteOptions {
  /// The grid's name. "density" is what Blender's and Houdini's volume
  /// shaders read by default.
  std::string grid_name = "density";
  /// String metadata stored on the grid (e.g. {"procgen_noise", "perlin"}).
  std::vector<std::pair<std::string, std::string>> metadata;
};

/// One float grid in a .vdb stream: voxel (x, y, z) holds
/// values[x + dims[0]·(y + dims[1]·z)] and sits at origin + (x, y, z) ⊙
/// spacing in world units (the voxel-to-world transform is that scale and
/// translation, so voxel centres match the raw sidecar's sample positions).
/// Background 0; every voxel whose value differs from 0 is active (tolerance
/// 0), so reading the file back gives every value bit for bit. Blosc-compressed
/// as OpenVDB writes by default. Throws Error (kUsage) for a bad view or when
/// the build has no OpenVDB, OutputError when the writer module cannot be
/// loaded (loadVolumeVdbWriter), when OpenVDB fails, or when the sink fails.
/// Time and extra memory linear in the voxel count (the sparse tree is
/// built, then streamed).
void writeVolumeVdb(const VolumeView& volume, ByteSink& sink, const VdbWriteOptions& options = {});

/// The same, to a file, atomically (procgen/output.hpp); the view is checked
/// and the module loaded before the file is opened.
void writeVolumeVdb(const VolumeView& volume, const std::filesystem::path& path,
                    const VdbWriteOptions& options = {});

}  // namespace procgen
