// procgen::distributed (include/procgen/distributed.hpp): the one-rank
// identity, and the calls into src/mpi/ while an MPI job runs. Every
// collective agrees on the error flag first (checkpoint), then transfers.
#include "procgen/distributed.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>

#include "procgen/output.hpp"
#if PROCGEN_HAVE_MPI
#include "common/module_loader.hpp"
#include "mpi/mpi_module.hpp"

// Set by CMakeLists.txt: the module's file name, and where an installed
// module sits relative to the installed executable's directory.
#ifndef PROCGEN_MPI_MODULE_FILE
#define PROCGEN_MPI_MODULE_FILE "procgen_mpi.so"
#endif
#ifndef PROCGEN_MPI_MODULE_INSTALL_DIR
#define PROCGEN_MPI_MODULE_INSTALL_DIR "../lib/procgen"
#endif
#endif

namespace procgen::distributed {
namespace {

bool g_active = false;
int g_rank = 0, g_size = 1;
std::string g_startup_error;  // started by mpirun, but the MPI module could not be loaded

#if PROCGEN_HAVE_MPI
const mpi::Module* g_mpi = nullptr;  // the MPI module, loaded by initialize() under mpirun

/// The one test of "started by mpirun" (the module trusts it).
bool launchedByMpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

/// The MPI module's table, loaded on first use; nullptr with `why` when it cannot be.
const mpi::Module* loadMpiModule(std::string& why) {
  static const mpi::Module* table = nullptr;
  if (table) return table;
  std::string tried;
  void* entry = detail::loadModuleEntry(PROCGEN_MPI_MODULE_FILE, PROCGEN_MPI_MODULE_INSTALL_DIR,
                                        PROCGEN_MPI_MODULE_ENTRY, tried);
  if (entry == nullptr) {
    why = "the MPI module " PROCGEN_MPI_MODULE_FILE " could not be loaded; tried " + tried +
          " (PROCGEN_PLUGIN_DIR names the directory that holds it)";
    return nullptr;
  }
  const mpi::Module* got = reinterpret_cast<const mpi::Module* (*)()>(entry)();
  if (got == nullptr || got->abi != mpi::kModuleAbi) {
    why = "the MPI module " PROCGEN_MPI_MODULE_FILE " is from another procgen build (its interface differs)";
    return nullptr;
  }
  return table = got;
}
#endif

template <typename T>
void reduce(std::span<T> values, ReduceOp op, int type) {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  checkpoint();
  g_mpi->allReduce(values.data(), values.size(), type, op);
#endif
}

}  // namespace

void initialize(int* argc, char*** argv) {
#if PROCGEN_HAVE_MPI
  if (!launchedByMpirun()) return;  // a plain start loads nothing of MPI
  g_mpi = loadMpiModule(g_startup_error);
  if (!g_mpi) return;
  g_mpi->initialize(argc, argv, g_rank, g_size);
  g_active = true;
#else
  // Started by mpirun, but without MPI every process is a whole run: say so once.
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (size && std::atoi(size) > 1 && rank && std::atoi(rank) == 0)
    std::fprintf(stderr, "warning: procgen was built without MPI (-DPROCGEN_MPI): each of the %s processes runs "
                 "the whole command\n", size);
#endif
}

const std::string& startupError() { return g_startup_error; }

void finalize() {
#if PROCGEN_HAVE_MPI
  if (g_active) g_mpi->finalize();
#endif
  g_active = false;
}

bool built() { return PROCGEN_HAVE_MPI != 0; }

std::string libraryVersion() {
#if PROCGEN_HAVE_MPI
  std::string why;
  const mpi::Module* module = loadMpiModule(why);  // cached: initialize()'s load, or this one
  return module ? module->libraryVersion() : "module missing: " + why;
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
  if (const int code = g_mpi->agree(0); code != 0) throw PeerFailure(static_cast<ExitCode>(code));
#endif
}

void fail(ExitCode code) noexcept {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  g_mpi->agree(std::max(1, static_cast<int>(code)));
#endif
}

int agreeOnExit(int code) noexcept {
  if (!g_active) return code;
#if PROCGEN_HAVE_MPI
  return g_mpi->agree(code);
#else
  return code;
#endif
}

void barrier() {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  checkpoint();
  g_mpi->barrier();
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
  return g_mpi->gather(bytes, root, counts);
#else
  return {};
#endif
}

void broadcast(std::vector<uint8_t>& bytes, int root) {
  if (!g_active) return;
#if PROCGEN_HAVE_MPI
  checkpoint();
  g_mpi->broadcast(bytes, root);
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
  g_mpi->allToAll(send, offsets, received, received_offsets);
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
  if (g_mpi->writeAtAll(std::string(name.begin(), name.end()), offset, bytes, message) != 0) {
    // Every rank knows (writeAtAll agreed): rank 0 reports it.
    throw PeerFailure(ExitCode::kOutputError, g_rank == 0 ? "cannot write " + path + ": " + message : "");
  }
  if (g_rank == 0) sink->finish();  // into the open transaction (or renamed into place)
#endif
}

// One rank: messages to itself wait in `sent` for their receive. In a job:
// the MPI side (src/mpi/), and the owners kept alive if it is abandoned.
struct Exchange::State {
  struct Sent {
    int tag;
    std::span<const uint8_t> bytes;
  };
  struct Wanted {
    int tag;
    std::function<uint8_t*(uint64_t)> place;
  };
  std::deque<Sent> sent;
  std::deque<Wanted> wanted;
#if PROCGEN_HAVE_MPI
  struct CloseMessages {
    void operator()(mpi::Messages* m) const { g_mpi->closeMessages(m); }
  };
  std::unique_ptr<mpi::Messages, CloseMessages> messages;
#endif
  std::vector<std::shared_ptr<const void>> owners;

  // One rank: hands each message to the first receive of its tag.
  void deliver() {
    for (auto w = wanted.begin(); w != wanted.end();) {
      auto m = std::find_if(sent.begin(), sent.end(), [&](const Sent& x) { return x.tag == w->tag; });
      if (m == sent.end()) {
        ++w;
        continue;
      }
      if (!m->bytes.empty()) std::memcpy(w->place(m->bytes.size()), m->bytes.data(), m->bytes.size());
      else w->place(0);
      sent.erase(m);
      w = wanted.erase(w);
    }
  }
};

Exchange::Exchange() : state_(std::make_unique<State>()) {
#if PROCGEN_HAVE_MPI
  if (g_active) state_->messages.reset(g_mpi->openMessages());
#endif
}

Exchange::~Exchange() {
#if PROCGEN_HAVE_MPI
  if (state_->messages && !g_mpi->idle(state_->messages.get())) {
    // Unwinding with transfers in flight: MPI may still read or write the
    // owners' memory, so they live until the process ends.
    (void)new std::vector<std::shared_ptr<const void>>(std::move(state_->owners));
  }
#endif
}

void Exchange::send(int to, int tag, std::span<const uint8_t> bytes, uint64_t group) {
  if (to < 0 || to >= g_size || tag < 0 || tag > 32767 || bytes.size() > uint64_t(INT32_MAX))
    throw Error("distributed::Exchange::send: bad rank, tag or size", ExitCode::kUsage);
#if PROCGEN_HAVE_MPI
  if (state_->messages) return g_mpi->send(state_->messages.get(), to, tag, bytes.data(), bytes.size(), group);
#endif
  (void)group;
  state_->sent.push_back({tag, bytes});
  state_->deliver();
}

void Exchange::receive(int from, int tag, std::function<uint8_t*(uint64_t)> place, uint64_t group) {
  if (from < 0 || from >= g_size || tag < 0 || tag > 32767)
    throw Error("distributed::Exchange::receive: bad rank or tag", ExitCode::kUsage);
#if PROCGEN_HAVE_MPI
  if (state_->messages) return g_mpi->receive(state_->messages.get(), from, tag, std::move(place), group);
#endif
  state_->wanted.push_back({tag, std::move(place)});
  state_->deliver();
}

void Exchange::startCheckpoint() {
#if PROCGEN_HAVE_MPI
  if (state_->messages) g_mpi->startAgreement(state_->messages.get());
#endif
}

void Exchange::progress() {
#if PROCGEN_HAVE_MPI
  if (state_->messages)
    if (const int code = g_mpi->progress(state_->messages.get()); code != 0)
      throw PeerFailure(static_cast<ExitCode>(code));
#endif
}

void Exchange::wait(uint64_t group) {
#if PROCGEN_HAVE_MPI
  if (!state_->messages) return;
  // Sleep rather than spin: ranks that share cores leave them to the others.
  for (mpi::Backoff backoff;; backoff.pause()) {
    progress();
    if (!g_mpi->pending(state_->messages.get(), group)) return;
  }
#else
  (void)group;
#endif
}

void Exchange::finish() {
#if PROCGEN_HAVE_MPI
  if (!state_->messages) return;
  for (mpi::Backoff backoff;; backoff.pause()) {
    progress();
    if (g_mpi->idle(state_->messages.get())) return;
  }
#endif
}

void Exchange::keepAlive(std::shared_ptr<const void> owner) { state_->owners.push_back(std::move(owner)); }

namespace {
constexpr uint64_t kGatherPiece = uint64_t{1} << 30;  // bytes per message (Exchange: below 2^31)
constexpr int kGatherSizesTag = 0;                    // then array a travels with tag 1 + a
constexpr uint64_t kGatherSizes = 0, kGatherData = 1; // Exchange groups
}  // namespace

RootGather::RootGather(size_t arrays) : arrays_(arrays), known_(size_t(g_size), 0) {
  if (arrays_ + 1 > 32768) throw Error("distributed::RootGather: too many arrays", ExitCode::kUsage);
  sizes_.resize(size_t(g_size));
  exchange_.startCheckpoint();
}

RootGather::~RootGather() = default;

void RootGather::send(std::span<const std::span<const uint8_t>> arrays, std::shared_ptr<const void> owner) {
  if (arrays.size() != arrays_)
    throw Error("distributed::RootGather::send: every array of the part", ExitCode::kUsage);
  own_.emplace_back(arrays.begin(), arrays.end());
  std::vector<uint64_t>& part_sizes = own_sizes_.emplace_back(arrays_);
  for (size_t a = 0; a < arrays_; ++a) part_sizes[a] = arrays[a].size();
  if (g_rank == 0) {
    sizes_[0].push_back(part_sizes);
    known_[0] = sizes_[0].size();
    return;
  }
  if (owner) exchange_.keepAlive(std::move(owner));
  exchange_.send(0, kGatherSizesTag,
                 {reinterpret_cast<const uint8_t*>(part_sizes.data()), part_sizes.size() * sizeof(uint64_t)},
                 kGatherSizes);
  for (size_t a = 0; a < arrays_; ++a)
    for (uint64_t at = 0; at < part_sizes[a]; at += kGatherPiece)
      exchange_.send(0, int(1 + a), arrays[a].subspan(at, std::min(kGatherPiece, part_sizes[a] - at)), kGatherData);
}

const std::vector<uint64_t>& RootGather::sizes(int r, size_t part) {
  if (g_rank != 0 || r < 0 || r >= g_size || (r == 0 && part >= known_[0]))
    throw Error("distributed::RootGather::sizes: rank 0 asks, after its own send()", ExitCode::kUsage);
  std::deque<std::vector<uint64_t>>& parts = sizes_[size_t(r)];
  if (part >= known_[size_t(r)]) {
    // The size messages of one rank arrive in the order sent: receives for every part up to this one.
    while (parts.size() <= part) {
      std::vector<uint64_t>& into = parts.emplace_back(arrays_);
      exchange_.receive(
          r, kGatherSizesTag,
          [this, &into](uint64_t n) {
            if (n != arrays_ * sizeof(uint64_t)) throw Error("distributed::RootGather: a rank sent other arrays");
            return reinterpret_cast<uint8_t*>(into.data());
          },
          kGatherSizes);
    }
    exchange_.wait(kGatherSizes);
    known_[size_t(r)] = parts.size();
  }
  return parts[part];
}

void RootGather::receive(int r, size_t part, size_t array, uint8_t* into) {
  const uint64_t n = sizes(r, part).at(array);
  if (r == 0) {
    if (n > 0) std::memcpy(into, own_[part][array].data(), n);
    return;
  }
  for (uint64_t at = 0; at < n; at += kGatherPiece) {
    const uint64_t piece = std::min(kGatherPiece, n - at);
    exchange_.receive(
        r, int(1 + array),
        [into, at, piece](uint64_t got) {
          if (got != piece) throw Error("distributed::RootGather: a piece of another size arrived");
          return into + at;
        },
        kGatherData);
  }
}

void RootGather::finish() { exchange_.finish(); }

SharedCounter::SharedCounter(uint64_t count) : count_(count) {
#if PROCGEN_HAVE_MPI
  if (g_active) queue_ = g_mpi->openQueue(count);
#endif
}

SharedCounter::~SharedCounter() {
#if PROCGEN_HAVE_MPI
  if (queue_) g_mpi->closeQueue(static_cast<mpi::Queue*>(queue_));
#endif
}

uint64_t SharedCounter::next() {
#if PROCGEN_HAVE_MPI
  if (queue_) return g_mpi->queueNext(static_cast<mpi::Queue*>(queue_));
#endif
  return local_ < count_ ? local_++ : count_;
}

Block blockOf(uint64_t count, int rank, int ranks) {
  const uint64_t r = uint64_t(rank), n = uint64_t(ranks), base = count / n, extra = count % n;
  const uint64_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

}  // namespace procgen::distributed
