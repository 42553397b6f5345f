// The MPI side of procgen::distributed (include/procgen/distributed.hpp),
// defined in src/mpi/mpi_backend.cpp, which CMake builds only with MPI
// (-DPROCGEN_MPI). src/common/distributed.cpp calls these only while a job
// is running (distributed::active()); every collective here begins with the
// error-flag agreement (agree) described in the public header.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "procgen/distributed.hpp"

namespace procgen::distributed::mpi {

/// MPI_Init when launched by mpirun; returns false (nothing started) otherwise.
bool initialize(int* argc, char*** argv, int& rank, int& size);
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

}  // namespace procgen::distributed::mpi
