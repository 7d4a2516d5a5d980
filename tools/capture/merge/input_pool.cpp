// merge's threads (input_pool.hpp).

#include "input_pool.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace nvtxpp::capture {

bool sqlite_threads_allowed() noexcept { return sqlite3_threadsafe() != 0; }

namespace {

/// The shared state of one for_each_input.
class input_pool {
 public:
  input_pool(std::size_t count, std::size_t window, std::function<void(std::size_t)> const& fn,
             std::function<void(std::size_t)> const& in_order)
      : count_{count}, window_{window}, fn_{fn}, in_order_{in_order}, done_(count, false) {}

  /// One thread's share: inputs until none is left or one has failed.
  void work() {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lock{mu_};
        cv_.wait(lock, [&] { return failed_ || next_ >= count_ || next_ < ordered_ + window_; });
        if (failed_ || next_ >= count_) {
          return;
        }
        i = next_++;
      }
      std::exception_ptr error;
      try {
        fn_(i);
      } catch (...) {
        error = std::current_exception();
      }
      std::unique_lock<std::mutex> lock{mu_};
      done_[i] = true;
      if (error && i < first_failed_) {
        first_failed_ = i;
        error_ = error;
        failed_ = true;
      }
      // The thread that completes the prefix runs in_order for it (under the lock: in order).
      try {
        while (ordered_ < count_ && ordered_ < first_failed_ && done_[ordered_]) {
          if (in_order_) {
            in_order_(ordered_);
          }
          ++ordered_;
        }
      } catch (...) {
        if (ordered_ < first_failed_) {
          first_failed_ = ordered_;
          error_ = std::current_exception();
          failed_ = true;
        }
      }
      lock.unlock();
      cv_.notify_all();
    }
  }

  void rethrow() const {
    if (error_) {
      std::rethrow_exception(error_);
    }
  }

 private:
  std::size_t const count_;
  std::size_t const window_;
  std::function<void(std::size_t)> const& fn_;
  std::function<void(std::size_t)> const& in_order_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t next_ = 0;     // the next input to claim
  std::size_t ordered_ = 0;  // inputs whose in_order has run
  std::size_t first_failed_ = SIZE_MAX;
  bool failed_ = false;
  std::exception_ptr error_;
  std::vector<bool> done_;
};

}  // namespace

void for_each_input(std::size_t count, unsigned jobs, std::function<void(std::size_t)> const& fn,
                    std::function<void(std::size_t)> const& in_order) {
  std::size_t const threads = std::min<std::size_t>(std::max(jobs, 1U), count);
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      fn(i);
      if (in_order) {
        in_order(i);
      }
    }
    return;
  }
  input_pool pool{count, 2 * threads, fn, in_order};
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back([&pool] { pool.work(); });
    } catch (std::system_error const&) {  // no more threads: those running do the rest
      break;
    }
  }
  pool.work();
  for (auto& t : helpers) {
    t.join();
  }
  pool.rethrow();
}

}  // namespace nvtxpp::capture
