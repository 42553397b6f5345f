// The MPI module, procgen_mpi.so (src/mpi/): the one piece of procgen that
// links Open MPI. src/common/distributed.cpp loads it with dlopen only when
// the process was started by mpirun (distributed::initialize), so a plain
// procgen run does not load libmpi and the six libraries it pulls in, nor pay
// their relocations: ~2 ms of every fresh process (docs/performance.md,
// "Start-up"). What the two sides share: this table of the module's
// functions (src/mpi/mpi_backend.hpp), returned by its one exported symbol,
// and Backoff. Both sides are built together, with one compiler and one
// C++ library, so the table carries C++ types and exceptions cross it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "procgen/distributed.hpp"

namespace procgen::distributed::mpi {

/// Sleeps between polls of a rank that waits for others: a waiting rank
/// leaves the cores to the ranks still working. Each sleep is an eighth of
/// the time waited so far (20 us .. 1 ms), so a wait ends at most ~1/8 late
/// (plus the kernel's timer slack): a rank waiting 2 ms for a peer's part
/// wakes within ~0.3 ms of its arrival instead of up to 1 ms later, and a
/// rank waiting a whole flame round still wakes only ~1000 times a second.
class Backoff {
 public:
  void pause() {
    const auto waited =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_);
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::clamp<int64_t>(waited.count() / 8, kShortestUs, kLongestUs)));
  }

 private:
  static constexpr int kShortestUs = 20, kLongestUs = 1000;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

class Messages;  // the module's (mpi_backend.hpp)
struct Queue;

/// The module's functions; see mpi_backend.hpp for what each does.
struct Module {
  uint32_t abi;  ///< kModuleAbi of the build that made the module
  void (*initialize)(int* argc, char*** argv, int& rank, int& size);
  void (*finalize)();
  std::string (*libraryVersion)();
  int (*agree)(int local_code);
  void (*barrier)();
  void (*allReduce)(void* values, uint64_t count, int type, ReduceOp op);
  std::vector<uint8_t> (*gather)(std::span<const uint8_t> bytes, int root, std::vector<uint64_t>* counts);
  void (*broadcast)(std::vector<uint8_t>& bytes, int root);
  void (*allToAll)(std::span<const uint8_t> send, std::span<const uint64_t> offsets, std::vector<uint8_t>& received,
                   std::vector<uint64_t>& received_offsets);
  int (*writeAtAll)(const std::string& path, uint64_t offset, std::span<const uint8_t> bytes, std::string& message);
  Queue* (*openQueue)(uint64_t count);
  uint64_t (*queueNext)(Queue* q);
  void (*closeQueue)(Queue* q);  // never throws
  Messages* (*openMessages)();
  void (*closeMessages)(Messages* m);
  void (*send)(Messages* m, int to, int tag, const uint8_t* data, uint64_t n, uint64_t group);
  void (*receive)(Messages* m, int from, int tag, std::function<uint8_t*(uint64_t)> place, uint64_t group);
  void (*startAgreement)(Messages* m);
  int (*progress)(Messages* m);
  bool (*pending)(const Messages* m, uint64_t group);
  bool (*idle)(const Messages* m);
};

/// Bumped whenever Module changes: a module of another build is refused.
inline constexpr uint32_t kModuleAbi = 2;

}  // namespace procgen::distributed::mpi

/// The module's entry point: its table (never null).
#define PROCGEN_MPI_MODULE_ENTRY "procgen_mpi_module"
extern "C" const procgen::distributed::mpi::Module* procgen_mpi_module();
