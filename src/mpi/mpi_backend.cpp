// procgen::distributed over MPI (include/procgen/distributed.hpp): MPI
// started only under mpirun, every collective preceded by the error-flag
// agreement, messages cut into pieces below MPI's int counts (2^30 bytes),
// the collective file write by MPI-IO (MPI_File_write_at_all).
#include "mpi/mpi_backend.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>
#include <cstdlib>
#include <deque>
#include <stdexcept>

namespace procgen::distributed::mpi {
namespace {

constexpr uint64_t kPiece = uint64_t{1} << 30;  // bytes per MPI call (counts are int)

// distributed::Exchange's messages travel here, apart from the collectives.
MPI_Comm g_messages = MPI_COMM_NULL;
// distributed::SharedCounter's asks and answers, apart from both.
MPI_Comm g_queue = MPI_COMM_NULL;

MPI_Datatype datatype(int type) {
  switch (type) {
    case 0: return MPI_DOUBLE;
    case 1: return MPI_FLOAT;
    case 2: return MPI_UINT64_T;
    default: return MPI_UINT8_T;
  }
}

MPI_Op mpiOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
  }
  return MPI_SUM;
}

int rankOf() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int sizeOf() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

void sendBytes(const uint8_t* data, uint64_t n, int to) {
  for (uint64_t at = 0; at < n; at += kPiece)
    MPI_Send(data + at, static_cast<int>(std::min(kPiece, n - at)), MPI_BYTE, to, 0, MPI_COMM_WORLD);
}
void receiveBytes(uint8_t* data, uint64_t n, int from) {
  for (uint64_t at = 0; at < n; at += kPiece)
    MPI_Recv(data + at, static_cast<int>(std::min(kPiece, n - at)), MPI_BYTE, from, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

}  // namespace

void initialize(int* argc, char*** argv, int& rank, int& size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(argc, argv);
  rank = rankOf();
  size = sizeOf();
  MPI_Comm_dup(MPI_COMM_WORLD, &g_messages);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_queue);
}

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (g_messages != MPI_COMM_NULL) MPI_Comm_free(&g_messages);  // freed when its operations end
  if (g_queue != MPI_COMM_NULL) MPI_Comm_free(&g_queue);
  MPI_Finalize();
}

std::string libraryVersion() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string v(text, size_t(std::max(0, length)));
  const size_t comma = v.find(',');
  return comma == std::string::npos ? v : v.substr(0, comma);
}

static void waitFor(MPI_Request& request) {
  Backoff backoff;
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    backoff.pause();
  }
}

int agree(int local_code) {
  // Ranks that arrive early wait here for the slowest. Open MPI's blocking
  // collectives poll the whole time, which takes a core from the ranks still
  // working when ranks share cores (--oversubscribe, a loaded node); a
  // non-blocking allreduce tested between sleeps does not.
  int agreed = 0;
  MPI_Request request;
  MPI_Iallreduce(&local_code, &agreed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request);
  waitFor(request);
  return agreed;
}

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

// distributed::SharedCounter. Rank 0 hands items out; rank r > 0 starts with
// items r and ranks - 1 + r (no message before the first answers), then asks
// for one more whenever it has none in reserve.
namespace {
constexpr int kAskTag = 1, kAnswerTag = 2;
constexpr uint64_t kAsk = 1, kLeave = 0;
}  // namespace

struct Queue {
  uint64_t count = 0;
  int rank = 0, ranks = 1;
  // rank 0
  uint64_t next = 0;
  std::vector<uint64_t> asked;        // per rank: the message of its posted receive
  std::vector<MPI_Request> receives;  // per rank: the receive of its next message
  std::vector<bool> ended;
  int ending = 0;  // ranks still to end
  // rank r > 0
  std::deque<uint64_t> ready;
  uint64_t answer = 0;
  MPI_Request answer_request = MPI_REQUEST_NULL;
  bool asking = false, none = false;
};

namespace {

void postAskReceive(Queue& q, int r) {
  MPI_Irecv(&q.asked[size_t(r)], 1, MPI_UINT64_T, r, kAskTag, g_queue, &q.receives[size_t(r)]);
}

// Rank 0: answers every message that has arrived; an ask gets the next item
// (or `count`: none left, and that rank has ended).
void serve(Queue& q) {
  for (int r = 1; r < q.ranks; ++r) {
    if (q.ended[size_t(r)]) continue;
    int arrived = 0;
    MPI_Test(&q.receives[size_t(r)], &arrived, MPI_STATUS_IGNORE);
    if (!arrived) continue;
    bool ends = q.asked[size_t(r)] == kLeave;
    if (!ends) {
      const uint64_t item = q.next < q.count ? q.next++ : q.count;
      MPI_Send(&item, 1, MPI_UINT64_T, r, kAnswerTag, g_queue);  // matched: that rank's receive is posted
      ends = item >= q.count;
    }
    if (ends) {
      q.ended[size_t(r)] = true;
      --q.ending;
    } else {
      postAskReceive(q, r);
    }
  }
}

void ask(Queue& q) {
  MPI_Irecv(&q.answer, 1, MPI_UINT64_T, 0, kAnswerTag, g_queue, &q.answer_request);
  MPI_Send(&kAsk, 1, MPI_UINT64_T, 0, kAskTag, g_queue);  // matched: rank 0 keeps a receive posted
  q.asking = true;
}

// Rank r > 0: takes the answer in, if it has arrived (`wait`: waits for it).
void collect(Queue& q, bool wait) {
  if (!q.asking) return;
  for (Backoff backoff;; backoff.pause()) {
    int arrived = 0;
    MPI_Test(&q.answer_request, &arrived, MPI_STATUS_IGNORE);
    if (arrived) break;
    if (!wait) return;
  }
  q.asking = false;
  if (q.answer < q.count)
    q.ready.push_back(q.answer);
  else
    q.none = true;
}

}  // namespace

Queue* openQueue(uint64_t count) {
  auto* q = new Queue;
  q->count = count;
  q->rank = rankOf();
  q->ranks = sizeOf();
  const uint64_t ranks = uint64_t(q->ranks), r = uint64_t(q->rank);
  if (q->rank == 0) {
    q->next = std::min(count, 2 * ranks - 1);  // item 0, then one more for each other rank (its reserve) after theirs
    q->ready.push_back(0);
    q->asked.resize(ranks);
    q->receives.assign(ranks, MPI_REQUEST_NULL);
    q->ended.assign(ranks, false);
    q->ending = q->ranks - 1;
    for (int k = 1; k < q->ranks; ++k) postAskReceive(*q, k);
  } else {
    q->ready.push_back(r);
    q->ready.push_back(ranks - 1 + r);
  }
  while (!q->ready.empty() && q->ready.back() >= count) q->ready.pop_back();
  return q;
}

uint64_t queueNext(Queue* q) {
  if (q->rank == 0) {
    serve(*q);
    if (!q->ready.empty()) {
      const uint64_t item = q->ready.front();
      q->ready.pop_front();
      return item;
    }
    if (q->next < q->count) return q->next++;
    // None left: every other rank's last ask is answered before this rank goes on.
    for (Backoff backoff; q->ending > 0; backoff.pause()) serve(*q);
    return q->count;
  }
  collect(*q, false);
  if (q->ready.empty() && !q->none) {
    if (!q->asking) ask(*q);
    collect(*q, true);
  }
  if (q->ready.empty()) return q->count;  // the answer was "none": nothing is in flight
  const uint64_t item = q->ready.front();
  q->ready.pop_front();
  if (q->ready.empty() && !q->asking && !q->none) ask(*q);  // one in reserve while this one is worked on
  return item;
}

void closeQueue(Queue* q) noexcept {
  if (q->rank == 0) {
    q->next = q->count;  // unwinding: whatever is asked now gets "none"
    for (Backoff backoff; q->ending > 0; backoff.pause()) serve(*q);
  } else if (!q->none) {
    collect(*q, true);  // the answer to the ask in flight (rank 0 answers every ask, even unwinding)
    if (!q->none) MPI_Send(&kLeave, 1, MPI_UINT64_T, 0, kAskTag, g_queue);
  }
  delete q;
}

void allReduce(void* values, uint64_t count, int type, ReduceOp op) {
  const MPI_Datatype t = datatype(type);
  int element = 1;
  MPI_Type_size(t, &element);
  const uint64_t piece = kPiece / uint64_t(element);
  auto* bytes = static_cast<uint8_t*>(values);
  for (uint64_t at = 0; at < count; at += piece)
    MPI_Allreduce(MPI_IN_PLACE, bytes + at * uint64_t(element), static_cast<int>(std::min(piece, count - at)), t,
                  mpiOp(op), MPI_COMM_WORLD);
}

std::vector<uint8_t> gather(std::span<const uint8_t> bytes, int root, std::vector<uint64_t>* counts) {
  const int ranks = sizeOf(), me = rankOf();
  uint64_t mine = bytes.size();
  std::vector<uint64_t> sizes(static_cast<size_t>(ranks), 0);
  MPI_Gather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
  std::vector<uint8_t> all;
  if (me == root) {
    uint64_t total = 0;
    for (uint64_t s : sizes) total += s;
    all.resize(total);
    uint64_t at = 0;
    for (int r = 0; r < ranks; ++r) {
      if (r == me) std::copy(bytes.begin(), bytes.end(), all.begin() + int64_t(at));
      else receiveBytes(all.data() + at, sizes[size_t(r)], r);
      at += sizes[size_t(r)];
    }
    if (counts) *counts = sizes;
  } else {
    sendBytes(bytes.data(), bytes.size(), root);
  }
  return all;
}

void broadcast(std::vector<uint8_t>& bytes, int root) {
  uint64_t n = bytes.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
  bytes.resize(n);
  for (uint64_t at = 0; at < n; at += kPiece)
    MPI_Bcast(bytes.data() + at, static_cast<int>(std::min(kPiece, n - at)), MPI_BYTE, root, MPI_COMM_WORLD);
}

void allToAll(std::span<const uint8_t> send, std::span<const uint64_t> offsets, std::vector<uint8_t>& received,
              std::vector<uint64_t>& received_offsets) {
  const int ranks = sizeOf();
  std::vector<uint64_t> send_counts(static_cast<size_t>(ranks)), recv_counts(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) send_counts[size_t(r)] = offsets[size_t(r) + 1] - offsets[size_t(r)];
  MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  received_offsets.assign(size_t(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r) received_offsets[size_t(r) + 1] = received_offsets[size_t(r)] + recv_counts[size_t(r)];
  received.resize(received_offsets.back());
  // One exchange when every count and displacement fits MPI's int.
  int fits = offsets[size_t(ranks)] <= uint64_t(INT_MAX) && received_offsets.back() <= uint64_t(INT_MAX) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fits) {
    const size_t n = static_cast<size_t>(ranks);
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    for (size_t r = 0; r < n; ++r) {
      sc[r] = int(send_counts[r]);
      sd[r] = int(offsets[r]);
      rc[r] = int(recv_counts[r]);
      rd[r] = int(received_offsets[r]);
    }
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, received.data(), rc.data(), rd.data(), MPI_BYTE,
                  MPI_COMM_WORLD);
    return;
  }
  // Otherwise rounds of at most kPiece bytes per pair; every rank takes part in every round.
  uint64_t longest = 0;
  for (int r = 0; r < ranks; ++r) longest = std::max({longest, send_counts[size_t(r)], recv_counts[size_t(r)]});
  MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  const uint64_t piece = std::max<uint64_t>(1, kPiece / uint64_t(ranks));
  const size_t n_ranks = static_cast<size_t>(ranks);
  std::vector<int> sc(n_ranks), sd(n_ranks), rc(n_ranks), rd(n_ranks);
  std::vector<uint8_t> send_piece, recv_piece;
  for (uint64_t at = 0; at < longest || at == 0; at += piece) {
    int s_total = 0, r_total = 0;
    for (int r = 0; r < ranks; ++r) {
      const uint64_t s = send_counts[size_t(r)] > at ? std::min(piece, send_counts[size_t(r)] - at) : 0;
      const uint64_t q = recv_counts[size_t(r)] > at ? std::min(piece, recv_counts[size_t(r)] - at) : 0;
      sc[size_t(r)] = int(s);
      sd[size_t(r)] = s_total;
      rc[size_t(r)] = int(q);
      rd[size_t(r)] = r_total;
      s_total += int(s);
      r_total += int(q);
    }
    send_piece.resize(size_t(s_total));
    recv_piece.resize(size_t(r_total));
    for (int r = 0; r < ranks; ++r)
      std::copy_n(send.data() + offsets[size_t(r)] + at, sc[size_t(r)], send_piece.data() + sd[size_t(r)]);
    MPI_Alltoallv(send_piece.data(), sc.data(), sd.data(), MPI_BYTE, recv_piece.data(), rc.data(), rd.data(),
                  MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
      std::copy_n(recv_piece.data() + rd[size_t(r)], rc[size_t(r)], received.data() + received_offsets[size_t(r)] + at);
    if (longest == 0) break;
  }
}

int writeAtAll(const std::string& path, uint64_t offset, std::span<const uint8_t> bytes, std::string& message) {
  MPI_File file;
  int rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
  // MPI-IO returns errors (its default handler is MPI_ERRORS_RETURN); agree on them.
  int failed = rc != MPI_SUCCESS ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) {
    if (rc == MPI_SUCCESS) MPI_File_close(&file);
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &length);
    message = rc != MPI_SUCCESS ? std::string(text, size_t(length)) : "another rank could not open it";
    return 1;
  }
  // Independent writes: the slabs are contiguous and disjoint, so the
  // collective write's two-phase exchange has nothing to merge, and its
  // synchronisation would make the rank that finishes first spin. Ranks
  // wait for each other in a sleeping allreduce before the (collective) close.
  int write_failed = 0;
  for (uint64_t at = 0; at < bytes.size(); at += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, bytes.size() - at));
    if (MPI_File_write_at(file, MPI_Offset(offset + at), bytes.data() + at, n, MPI_BYTE, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
      write_failed = 1;
  }
  write_failed = agree(write_failed);
  if (MPI_File_close(&file) != MPI_SUCCESS) write_failed = 1;
  write_failed = agree(write_failed);
  if (write_failed) message = "MPI_File_write_at_all failed (disk full?)";
  return write_failed;
}

struct Messages::Transfer {
  MPI_Request request = MPI_REQUEST_NULL;
  uint64_t group = 0;
};
struct Messages::Agreement {
  int local = 0, agreed = 0;
  MPI_Request request = MPI_REQUEST_NULL;
};

Messages::Messages() = default;

Messages::~Messages() {
  // Operations still in flight (a failure is unwinding) may still write
  // their request and buffers: leave those to MPI until the process ends.
  for (auto& t : transfers_) (void)t.release();
  for (auto& a : agreements_) (void)a.release();
}

void Messages::send(int to, int tag, const uint8_t* data, uint64_t n, uint64_t group) {
  auto t = std::make_unique<Transfer>();
  t->group = group;
  MPI_Isend(data, static_cast<int>(n), MPI_BYTE, to, tag, g_messages, &t->request);
  transfers_.push_back(std::move(t));
}

void Messages::receive(int from, int tag, std::function<uint8_t*(uint64_t)> place, uint64_t group) {
  waiting_[{from, tag}].push_back({std::move(place), group});
}

void Messages::startAgreement() {
  auto a = std::make_unique<Agreement>();
  MPI_Iallreduce(&a->local, &a->agreed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &a->request);
  agreements_.push_back(std::move(a));
}

int Messages::progress() {
  for (auto& [key, queue] : waiting_) {
    while (!queue.empty()) {
      int found = 0;
      MPI_Message message;
      MPI_Status status;
      MPI_Improbe(key.first, key.second, g_messages, &found, &message, &status);
      if (!found) break;
      int n = 0;
      MPI_Get_count(&status, MPI_BYTE, &n);
      auto t = std::make_unique<Transfer>();
      t->group = queue.front().group;
      // place() may throw (memory): the message is then never received, and
      // this rank's failure reaches the others through their agreements.
      uint8_t* into = queue.front().place(static_cast<uint64_t>(n));
      MPI_Imrecv(into, n, MPI_BYTE, &message, &t->request);
      transfers_.push_back(std::move(t));
      queue.pop_front();
    }
  }
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    int done = 0;
    MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE);
    it = done ? transfers_.erase(it) : std::next(it);
  }
  // Agreements complete in the order they were started.
  while (!agreements_.empty()) {
    int done = 0;
    MPI_Test(&agreements_.front()->request, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    const int code = agreements_.front()->agreed;
    agreements_.pop_front();
    if (code != 0) return code;
  }
  return 0;
}

bool Messages::pending(uint64_t group) const {
  for (const auto& [key, queue] : waiting_)
    for (const Receive& r : queue)
      if (r.group == group) return true;
  for (const auto& t : transfers_)
    if (t->group == group) return true;
  return false;
}

bool Messages::idle() const {
  for (const auto& [key, queue] : waiting_)
    if (!queue.empty()) return false;
  return transfers_.empty() && agreements_.empty();
}

}  // namespace procgen::distributed::mpi
