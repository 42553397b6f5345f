// procgen distributed runs: what a command needs to split its work over the
// ranks of `mpirun -n R procgen ...`, without MPI types (docs/scaling.md).
//
// The layer is optional (CMake -DPROCGEN_MPI=AUTO|ON|OFF). Without it — or
// in a process not started by mpirun, where MPI is never initialised — every
// function is the identity of one rank: rank() is 0, size() is 1, a reduction
// returns its input, a gather returns the caller's part, a collective write
// writes the whole file. Commands therefore have one code path.
//
// Failures. Every collective first agrees on an error flag (a small
// allreduce): a rank whose command throws calls fail(code) from its error
// handler, which joins the other ranks' next agreement with that code; they
// throw PeerFailure there, unwind (removing their temporary outputs) and exit
// with the same code. So one rank's bad input or unwritable output ends the
// whole job with that rank's message and no rank waits for ever. A rank must
// not throw between the agreement and the transfer of one collective (the
// functions here allocate before agreeing). An MPI error itself aborts the
// job (MPI's default handler).
//
// Thread safety: call from the thread that called initialize() only.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "procgen/error.hpp"

namespace procgen::distributed {

/// Starts MPI when this process was launched by mpirun (OMPI_COMM_WORLD_SIZE,
/// PMIX_RANK or PMI_RANK is set) and the build has MPI, loading the MPI
/// module then; otherwise does nothing (a plain start loads nothing of MPI).
/// Call once, first thing in main.
void initialize(int* argc, char*** argv);
/// Finalizes MPI if initialize() started it. Call once, before returning from main.
void finalize();
/// Non-empty when this process was started by mpirun but could not join the
/// job (the build's MPI module, procgen_mpi.so, could not be loaded): why.
/// The caller should stop with that message instead of running as one rank.
const std::string& startupError();

/// True when the build has MPI.
bool built();
/// A description of the MPI library ("Open MPI v4.1.4, ...") or "not built".
std::string libraryVersion();
/// True when this process is one rank of an MPI job (even of size 1).
bool active();
int rank();
int size();
/// True on rank 0: the rank that writes whole-job outputs and prints summaries.
inline bool isRoot() { return rank() == 0; }

/// A failure every rank already knows of (another rank failed, or a
/// collective failed on all): this rank stops with `exitCode()` without
/// calling fail(), and prints `what()` only when `report()` (the rank that
/// saw the cause).
class PeerFailure : public Error {
 public:
  explicit PeerFailure(ExitCode code, const std::string& message = {});
  bool report() const noexcept { return report_; }

 private:
  bool report_;
};

/// Collective: throws PeerFailure when another rank called fail().
void checkpoint();
/// This rank failed with `code` (its message already printed): joins the
/// other ranks' next agreement so that they stop too. Call once, from the
/// error handler, never after a PeerFailure.
void fail(ExitCode code) noexcept;
/// Collective, without the error agreement: the largest of the ranks'
/// codes (0 when every rank succeeded). The CLI's last call of a run.
int agreeOnExit(int code) noexcept;
/// Collective: all ranks reach it.
void barrier();

enum class ReduceOp : uint8_t { kSum, kMin, kMax };

/// Collective, element-wise over the ranks, the result on every rank. Sums of
/// floating-point values are not exact in general (the order is MPI's): use
/// them for integers and statistics, not for bit-exact outputs.
void allReduce(std::span<double> values, ReduceOp op);
void allReduce(std::span<float> values, ReduceOp op);
void allReduce(std::span<uint64_t> values, ReduceOp op);
void allReduce(std::span<uint8_t> values, ReduceOp op);

/// Collective: every rank's bytes concatenated in rank order on `root`
/// (other ranks get an empty vector); `counts`, if given, receives each
/// rank's byte count on root.
std::vector<uint8_t> gather(std::span<const uint8_t> bytes, int root = 0,
                            std::vector<uint64_t>* counts = nullptr);
/// Collective: rank `root`'s bytes on every rank (others' `bytes` is replaced).
void broadcast(std::vector<uint8_t>& bytes, int root = 0);
/// Collective: rank r sends send[offsets[d] .. offsets[d + 1]) to rank d
/// (offsets has size() + 1 entries); returns what every rank sent to this
/// one, in rank order, with the per-rank offsets in `received_offsets`.
std::vector<uint8_t> allToAll(std::span<const uint8_t> send, std::span<const uint64_t> offsets,
                              std::vector<uint64_t>& received_offsets);
/// The same into `received` (resized; its capacity is reused between calls).
void allToAll(std::span<const uint8_t> send, std::span<const uint64_t> offsets, std::vector<uint8_t>& received,
              std::vector<uint64_t>& received_offsets);

/// Collective: rank 0, then 1, ..., runs `step` on `state` in turn, each
/// starting from the state the previous rank left; the final state on every
/// rank. For sequential folds that cannot be split (a running hash). A
/// throwing step fails its rank as usual.
void chain(std::vector<uint8_t>& state, const std::function<void(std::vector<uint8_t>&)>& step);

/// Collective: writes the file `path` of `total` bytes, this rank's `bytes`
/// at byte `offset` (ranks' ranges disjoint, together covering [0, total)),
/// with MPI-IO (MPI_File_write_at_all) into a temporary that rank 0 created
/// and hands to the open OutputTransaction (procgen/output.hpp), so `path`
/// appears when the run commits. One rank: an ordinary FileSink write.
/// Throws OutputError on rank 0 when the file cannot be created (the others
/// get PeerFailure); Error (kUsage) when the ranges do not add up.
void writeFileAtOffsets(const std::string& path, uint64_t offset, std::span<const uint8_t> bytes,
                        uint64_t total);

/// Nonblocking messages between ranks, for work that overlaps its
/// communication with its computation (the flame iteration over ranks,
/// docs/scaling.md). Messages travel on a communicator of their own, so they
/// never match the collectives above, and (Open MPI has no progress thread)
/// they move only while the rank calls into MPI: call progress() often.
///
/// Failures: startCheckpoint() is checkpoint() without waiting — it joins
/// another rank's fail() in the same order as checkpoint() would, and
/// progress() and wait() throw PeerFailure when one completes with a failure.
/// A rank waiting for a peer's message must have started the checkpoint that
/// the peer's fail() would join (the peer failed before sending).
///
/// Memory: bytes given to send() and the memory a receive places into must
/// stay valid until the transfer is done. An Exchange destroyed with
/// transfers in flight (unwinding after a failure) keeps the owners given to
/// keepAlive() until the process ends, because MPI may still use them.
/// One rank (no MPI job): a message to rank 0 is copied to the matching
/// receive. Thread safety: as the rest of this header.
class Exchange {
 public:
  Exchange();
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  /// Starts sending `bytes` (fewer than 2^31) to rank `to` with `tag`
  /// (0 .. 32767). `group` names the transfer for wait().
  void send(int to, int tag, std::span<const uint8_t> bytes, uint64_t group);
  /// Starts receiving the next message from rank `from` with `tag` (messages
  /// of one sender and tag arrive in the order they were sent, into the
  /// receives in the order they were started): when it arrives, `place(n)`
  /// returns where its n bytes go.
  void receive(int from, int tag, std::function<uint8_t*(uint64_t)> place, uint64_t group);
  /// Collective over all ranks: the nonblocking checkpoint described above.
  void startCheckpoint();
  /// Moves transfers and checkpoints on without waiting.
  void progress();
  /// Waits until every transfer of `group` is done, sleeping between polls.
  void wait(uint64_t group);
  /// Waits until every transfer and checkpoint started is done.
  void finish();
  /// Shares ownership of memory that transfers use (see above).
  void keepAlive(std::shared_ptr<const void> owner);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

/// A gather of arrays on rank 0 that overlaps the other ranks' work (the
/// scene's geometry, docs/scaling.md "Scenes"): every rank hands its arrays
/// over in parts, each as soon as it is ready (send(), which returns at once),
/// and goes on working; rank 0 learns the array sizes of a rank's parts
/// (sizes(r, p)), says where each array of each part goes (receive()), and
/// the bytes land straight in that memory — no staging buffer, no zero-fill,
/// each byte written once on rank 0 (its own arrays by one copy, the others'
/// by MPI's transport). Messages as Exchange's, in pieces below 2^31 bytes;
/// failures as Exchange's (the constructor starts the nonblocking
/// checkpoint, so a rank that fails before sending stops the others waiting
/// in sizes() or finish()). One rank: receive() copies the rank's own arrays.
class RootGather {
 public:
  /// Collective: every rank, the same number of arrays per part.
  explicit RootGather(size_t arrays);
  ~RootGather();
  RootGather(const RootGather&) = delete;
  RootGather& operator=(const RootGather&) = delete;

  /// Every rank, once per part (parts numbered 0, 1, ... in the order sent):
  /// the part's arrays (`arrays` of them), in order. Their memory must stay
  /// valid until finish(); `owner`, if given, owns it, and is kept alive
  /// until the process ends if the run fails with transfers in flight.
  void send(std::span<const std::span<const uint8_t>> arrays, std::shared_ptr<const void> owner = {});
  /// Rank 0: the byte size of each array of rank r's part `part` (waits for
  /// them; rank 0's own: parts it has sent).
  const std::vector<uint64_t>& sizes(int r, size_t part = 0);
  /// Rank 0: array `array` of rank r's part `part` goes to `into`
  /// (sizes(r, part)[array] bytes). For one rank and array, parts in order.
  void receive(int r, size_t part, size_t array, uint8_t* into);
  void receive(int r, size_t array, uint8_t* into) { receive(r, 0, array, into); }
  /// Every rank: waits until its transfers are done (rank 0: every receive).
  void finish();

 private:
  Exchange exchange_;
  size_t arrays_;
  std::vector<std::vector<std::span<const uint8_t>>> own_;  // this rank's parts (rank 0 copies from them)
  std::deque<std::vector<uint64_t>> own_sizes_;             // stable addresses: sends read them
  std::vector<std::deque<std::vector<uint64_t>>> sizes_;    // rank 0: per rank, its parts' sizes asked so far
  std::vector<size_t> known_;                               // rank 0: per rank, parts whose sizes arrived
};

/// Items 0 .. count-1 handed out to the ranks as they ask, for
/// self-scheduling (the scene's instances, docs/scaling.md "Scenes"): each
/// rank calls next() until it returns `count`; every item goes to exactly
/// one rank, whichever asks first, so ranks that take items in a fixed order
/// (the longest predicted first) balance themselves by their real speed on
/// the machine, not by a prediction. Rank 0 holds the counter and answers
/// the others' asks whenever it calls next() itself; the others keep one
/// ask in flight while they work (a point-to-point message on a
/// communicator of its own: nothing collective, nothing to set up). Rank r
/// starts with items r and size() - 1 + r without asking.
/// Rank 0's last next() (the one returning `count`) returns only once
/// every other rank has had its last answer, so call next() between items
/// (and nothing blocking on the other ranks in the loop).
/// Failures: a rank unwinding from inside its loop drains in the destructor
/// (rank 0 answers "none" to every ask until every rank has ended; another
/// rank waits for the answer to its ask in flight and leaves), so the other
/// ranks end their loops and meet the failure at their next checkpoint.
/// Not collective. One rank: a plain counter.
class SharedCounter {
 public:
  /// Every rank, the same count.
  explicit SharedCounter(uint64_t count);
  ~SharedCounter();
  SharedCounter(const SharedCounter&) = delete;
  SharedCounter& operator=(const SharedCounter&) = delete;
  uint64_t next();

 private:
  void* queue_ = nullptr;  // mpi::Queue
  uint64_t count_, local_ = 0;
};

/// [begin, end) of `count` items for `rank` of `ranks`: contiguous blocks,
/// the first count % ranks one item longer.
struct Block {
  uint64_t begin = 0, end = 0;
};
Block blockOf(uint64_t count, int rank, int ranks);

}  // namespace procgen::distributed
