// ThreadSanitizer and oneTBB: the system libtbb is not instrumented, so the
// fork (tasks handed to workers) and join (parallel_for returning) inside it
// are invisible to TSan, which then reports every access made before a fork
// or after a join as racing. These annotations state that ordering on a
// token owned by the caller; without TSan they compile to nothing. Races
// inside the workers, synchronised by our own std::atomic, stay visible.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define PROCGEN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PROCGEN_TSAN 1
#endif
#endif

#if defined(PROCGEN_TSAN)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace procgen::detail {

/// Call fork() before handing work to TBB, enter()/leave() around each task
/// body, join() after TBB returns.
class TsanForkJoin {
 public:
#if defined(PROCGEN_TSAN)
  void fork() { __tsan_release(&token_); }
  void enter() { __tsan_acquire(&token_); }
  void leave() { __tsan_release(&token_); }
  void join() { __tsan_acquire(&token_); }

 private:
  char token_ = 0;
#else
  void fork() {}
  void enter() {}
  void leave() {}
  void join() {}
#endif
};

}  // namespace procgen::detail
