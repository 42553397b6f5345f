/* The C interface between libprocgen and the .vdb writer module
 * (procgen_vdb.so, built from vdb_module/vdb_module.cpp). The module is the
 * only code that links OpenVDB: libopenvdb and the libraries it pulls in
 * (Boost.Iostreams, Blosc, TBB, Imath, log4cplus, ...) cost every process
 * linked with them tens of milliseconds of relocations before main, so
 * libprocgen loads the module with dlopen on the first .vdb write instead
 * (vdb_writer.cpp; docs/performance.md, "Cold start").
 *
 * One entry point, its version in its name: a module from another procgen
 * build that disagrees on this interface has no symbol of this name, and
 * loading it fails with dlsym's error instead of misreading arguments.
 * Plain C types only, so no C++ object crosses the boundary, and no
 * exception either: the module catches its own, the host's sink reports a
 * failure through the callback's return value.
 *
 * Named .hpp although it is C: every .h file under src/ is a header kernels share
 * (compiled as OpenCL C and embedded in the library, ProcgenKernels.cmake). */
#ifndef PROCGEN_IO_VOLUMES_VDB_MODULE_ABI_H
#define PROCGEN_IO_VOLUMES_VDB_MODULE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROCGEN_VDB_MODULE_ENTRY "procgen_vdb_write_v1"

/* The volume, as procgen::VolumeView: value (x, y, z) is
 * values[x + dims[0] * (y + dims[1] * z)], sample (x, y, z) sits at
 * origin + (x, y, z) * spacing. The host has validated it (every dimension
 * in 1 .. 2^31 - 1, spacing finite and positive, origin finite). */
typedef struct procgen_vdb_volume {
  const float* values;
  uint64_t dims[3];
  double spacing[3];
  double origin[3];
} procgen_vdb_volume;

/* Receives the file's bytes in order, in chunks of any size. Returns 0 when
 * it took them, anything else to stop the write (the host keeps its own
 * error and reports it). */
typedef int (*procgen_vdb_write_bytes)(void* context, const void* bytes, size_t size);

/* Status of the entry point. */
enum {
  PROCGEN_VDB_OK = 0,
  PROCGEN_VDB_SINK_FAILED = 1,   /* write_bytes returned non-zero; no message */
  PROCGEN_VDB_OUT_OF_MEMORY = 2, /* std::bad_alloc inside OpenVDB */
  PROCGEN_VDB_FAILED = 3         /* any other error; the message says what */
};

/* Writes the volume as one float grid named grid_name in a .vdb stream:
 * background 0, every voxel whose value is not 0 active, the voxel-to-world
 * transform the spacing's scale then the origin's translation, the
 * metadata_count (key, value) strings as string metadata on the grid, Blosc
 * compression as OpenVDB writes by default. The bytes go to write_bytes; on
 * PROCGEN_VDB_FAILED a NUL-terminated message (cut to error_capacity) is in
 * error. Thread safety: concurrent calls are safe (OpenVDB's initialize()
 * is). */
typedef int (*procgen_vdb_write_fn)(const procgen_vdb_volume* volume, const char* grid_name,
                                    const char* const* metadata_keys, const char* const* metadata_values,
                                    size_t metadata_count, procgen_vdb_write_bytes write_bytes, void* context,
                                    char* error, size_t error_capacity);

#ifdef __cplusplus
}
#endif

#endif /* PROCGEN_IO_VOLUMES_VDB_MODULE_ABI_H */
