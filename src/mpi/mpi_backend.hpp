// The MPI side of procgen::distributed (include/procgen/distributed.hpp),
// defined in src/mpi/mpi_backend.cpp, inside the MPI module procgen_mpi.so
// (built only with -DPROCGEN_MPI; src/mpi/mpi_module.hpp is how
// src/common/distributed.cpp reaches these, only while a job is running).
// Every collective here begins with the error-flag agreement (agree)
// described in the public header.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mpi/mpi_module.hpp"
#include "procgen/distributed.hpp"

namespace procgen::distributed::mpi {

/// MPI_Init (the host calls it only when mpirun started the process), this
/// rank and the job's size.
void initialize(int* argc, char*** argv, int& rank, int& size);
void finalize();
std::string libraryVersion();

/// The error-flag allreduce (max of the codes; 0 = every rank is fine).
int agree(int local_code);
void barrier();
void allReduce(void* values, uint64_t count, int type, ReduceOp op);  // type: 0 double, 1 float, 2 u64, 3 u8
std::vector<uint8_t> gather(std::span<const uint8_t> bytes, int root, std::vector<uint64_t>* counts);
void broadcast(std::vector<uint8_t>& bytes, int root);
void allToAll(std::span<const uint8_t> send, std::span<const uint64_t> offsets, std::vector<uint8_t>& received,
              std::vector<uint64_t>& received_offsets);
/// MPI-IO: opens `path` (already created) on every rank, writes at `offset`, closes; returns 0 or an MPI error class.
int writeAtAll(const std::string& path, uint64_t offset, std::span<const uint8_t> bytes, std::string& message);

/// distributed::SharedCounter over point-to-point messages on a
/// communicator of their own (no collective, nothing to set up): rank 0
/// holds the counter and answers the other ranks' asks whenever it takes an
/// item of its own; every other rank keeps one ask in flight while it works,
/// so an answer is usually there when it needs it. Every other rank ends
/// with exactly one answer "none" (or, unwinding, a leave), which rank 0
/// waits for, so no message is left unmatched (see distributed.cpp).
struct Queue;
Queue* openQueue(uint64_t count);
uint64_t queueNext(Queue* q);
/// After next() returned `count`, or unwinding (drains: rank 0 answers
/// every ask with "none" until each rank has ended; another rank waits for
/// the answer to its ask in flight, then leaves).
void closeQueue(Queue* q) noexcept;

/// distributed::Exchange's transfers on the job's second communicator (a
/// duplicate of MPI_COMM_WORLD made by initialize) and its nonblocking
/// agreements on MPI_COMM_WORLD, where they match other ranks' agree().
/// A receive is matched by MPI_Improbe on the first receive still waiting
/// of its (sender, tag) queue, placed, then received with MPI_Imrecv.
class Messages {
 public:
  Messages();
  /// Leaves whatever is in flight to MPI (the caller keeps the memory alive).
  ~Messages();
  void send(int to, int tag, const uint8_t* data, uint64_t n, uint64_t group);
  void receive(int from, int tag, std::function<uint8_t*(uint64_t)> place, uint64_t group);
  void startAgreement();
  /// Moves everything on; returns 0, or the failure code an agreement completed with.
  int progress();
  /// Whether a transfer of `group` is still in flight.
  bool pending(uint64_t group) const;
  /// Whether nothing (transfer or agreement) is in flight.
  bool idle() const;

 private:
  struct Receive {
    std::function<uint8_t*(uint64_t)> place;
    uint64_t group;
  };
  struct Transfer;
  struct Agreement;
  std::map<std::pair<int, int>, std::deque<Receive>> waiting_;  // by (sender, tag), in order
  std::deque<std::unique_ptr<Transfer>> transfers_;
  std::deque<std::unique_ptr<Agreement>> agreements_;
};

}  // namespace procgen::distributed::mpi
