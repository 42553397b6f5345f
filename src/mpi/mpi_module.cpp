// The MPI module's table (src/mpi/mpi_module.hpp): the functions of
// mpi_backend.cpp, by pointer, for src/common/distributed.cpp.
#include "mpi/mpi_module.hpp"

#include "mpi/mpi_backend.hpp"

namespace mpi = procgen::distributed::mpi;

extern "C" __attribute__((visibility("default"))) const mpi::Module* procgen_mpi_module() {
  static const mpi::Module table = {
      mpi::kModuleAbi,
      mpi::initialize,
      mpi::finalize,
      mpi::libraryVersion,
      mpi::agree,
      mpi::barrier,
      mpi::allReduce,
      mpi::gather,
      mpi::broadcast,
      mpi::allToAll,
      mpi::writeAtAll,
      mpi::openQueue,
      mpi::queueNext,
      [](mpi::Queue* q) { mpi::closeQueue(q); },
      [] { return new mpi::Messages(); },
      [](mpi::Messages* m) { delete m; },
      [](mpi::Messages* m, int to, int tag, const uint8_t* data, uint64_t n, uint64_t group) {
        m->send(to, tag, data, n, group);
      },
      [](mpi::Messages* m, int from, int tag, std::function<uint8_t*(uint64_t)> place, uint64_t group) {
        m->receive(from, tag, std::move(place), group);
      },
      [](mpi::Messages* m) { m->startAgreement(); },
      [](mpi::Messages* m) { return m->progress(); },
      [](const mpi::Messages* m, uint64_t group) { return m->pending(group); },
      [](const mpi::Messages* m) { return m->idle(); },
  };
  return &table;
}
