// procgen::distributed (include/procgen/distributed.hpp): the one-rank
// identity, and the calls into src/mpi/ while an MPI job runs. Every
// collective agrees on the error flag first (checkpoint), then transfers.
#include "procgen/distributed.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "procgen/output.hpp"
#if PROCGEN_HAVE_MPI
#include "mpi/mpi_backend.hpp"
#endif

namespace procgen::distributed {
namespace {

bool g_active = false;
int g_rank = 0, g_size = 1;

template <typename T>
void reduce(std::span<T> values, ReduceOp op, int type) {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  checkpoint();
  mpi::allReduce(values.data(), values.size(), type, op);
#endif
}

}  // namespace

void initialize(int* argc, char*** argv) {
#if PROCGEN_HAVE_MPI
  g_active = mpi::initialize(argc, argv, g_rank, g_size);
#else
  // Started by mpirun, but without MPI every process is a whole run: say so once.
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (size && std::atoi(size) > 1 && rank && std::atoi(rank) == 0)
    std::fprintf(stderr, "warning: procgen was built without MPI (-DPROCGEN_MPI): each of the %s processes runs "
                 "the whole command\n", size);
#endif
}

void finalize() {
#if PROCGEN_HAVE_MPI
  if (g_active) mpi::finalize();
#endif
  g_active = false;
}

bool built() { return PROCGEN_HAVE_MPI != 0; }

std::string libraryVersion() {
#if PROCGEN_HAVE_MPI
  return mpi::libraryVersion();
#else
  return "not built";
#endif
}

bool active() { return g_active; }
int rank() { return g_rank; }
int size() { return g_size; }

PeerFailure::PeerFailure(ExitCode code, const std::string& message)
    : Error(message.empty() ? "another rank failed" : message, code), report_(!message.empty()) {}

void checkpoint() {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  if (const int code = mpi::agree(0); code != 0) throw PeerFailure(static_cast<ExitCode>(code));
#endif
}

void fail(ExitCode code) noexcept {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  mpi::agree(std::max(1, static_cast<int>(code)));
#endif
}

int agreeOnExit(int code) noexcept {
  if (!g_active) return code;
#if PROCGEN_HAVE_MPI
  return mpi::agree(code);
#else
  return code;
#endif
}

void barrier() {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  checkpoint();
  mpi::barrier();
#endif
}

void allReduce(std::span<double> values, ReduceOp op) { reduce(values, op, 0); }
void allReduce(std::span<float> values, ReduceOp op) { reduce(values, op, 1); }
void allReduce(std::span<uint64_t> values, ReduceOp op) { reduce(values, op, 2); }
void allReduce(std::span<uint8_t> values, ReduceOp op) { reduce(values, op, 3); }

std::vector<uint8_t> gather(std::span<const uint8_t> bytes, int root, std::vector<uint64_t>* counts) {
  if (!g_active) {
    if (counts) *counts = {bytes.size()};
    return {bytes.begin(), bytes.end()};
  }
#if PROCGEN_HAVE_MPI
  checkpoint();
  return mpi::gather(bytes, root, counts);
#else
  return {};
#endif
}

void broadcast(std::vector<uint8_t>& bytes, int root) {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  checkpoint();
  mpi::broadcast(bytes, root);
#endif
}

void allToAll(std::span<const uint8_t> send, std::span<const uint64_t> offsets, std::vector<uint8_t>& received,
              std::vector<uint64_t>& received_offsets) {
  if (offsets.size() != size_t(g_size) + 1 || offsets.back() > send.size())
    throw Error("distributed::allToAll: offsets do not match the ranks and the buffer", ExitCode::kUsage);
  if (!g_active) {
    received_offsets = {0, offsets[1] - offsets[0]};
    received.assign(send.begin() + int64_t(offsets[0]), send.begin() + int64_t(offsets[1]));
    return;
  }
#if PROCGEN_HAVE_MPI
  checkpoint();
  mpi::allToAll(send, offsets, received, received_offsets);
#endif
}

std::vector<uint8_t> allToAll(std::span<const uint8_t> send, std::span<const uint64_t> offsets,
                              std::vector<uint64_t>& received_offsets) {
  std::vector<uint8_t> received;
  allToAll(send, offsets, received, received_offsets);
  return received;
}

void chain(std::vector<uint8_t>& state, const std::function<void(std::vector<uint8_t>&)>& step) {
  if (!g_active) return step(state);
  // Rank r's turn is one broadcast from r: every rank takes part in every
  // turn, so a failing step reaches the others at the next agreement.
  for (int r = 0; r < g_size; ++r) {
    if (r == g_rank) step(state);
    broadcast(state, r);
  }
}

void writeFileAtOffsets(const std::string& path, uint64_t offset, std::span<const uint8_t> bytes, uint64_t total) {
  if (!g_active) {
    if (offset != 0 || bytes.size() != total)
      throw Error("distributed::writeFileAtOffsets: one rank must write the whole file", ExitCode::kUsage);
    FileSink sink(path);
    sink.write(bytes.data(), bytes.size());
    sink.finish();
    return;
  }
#if PROCGEN_HAVE_MPI
  uint64_t sum[1] = {bytes.size()};
  allReduce(std::span<uint64_t>(sum, 1), ReduceOp::kSum);
  if (sum[0] != total) throw Error("distributed::writeFileAtOffsets: the ranks' ranges do not add up", ExitCode::kUsage);
  // Rank 0 creates the temporary (the transaction's rules: a claimed path,
  // a hidden temporary beside it); the others learn its name.
  std::unique_ptr<FileSink> sink;
  std::vector<uint8_t> name;
  if (g_rank == 0) {
    sink = std::make_unique<FileSink>(path);  // throws OutputError: the others stop at the broadcast
    const std::string target = sink->dataPath();
    name.assign(target.begin(), target.end());
  }
  broadcast(name, 0);
  std::string message;
  checkpoint();
  if (mpi::writeAtAll(std::string(name.begin(), name.end()), offset, bytes, message) != 0) {
    // Every rank knows (writeAtAll agreed): rank 0 reports it.
    throw PeerFailure(ExitCode::kOutputError, g_rank == 0 ? "cannot write " + path + ": " + message : "");
  }
  if (g_rank == 0) sink->finish();  // into the open transaction (or renamed into place)
#endif
}

Block blockOf(uint64_t count, int rank, int ranks) {
  const uint64_t r = uint64_t(rank), n = uint64_t(ranks), base = count / n, extra = count % n;
  const uint64_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

}  // namespace procgen::distributed
