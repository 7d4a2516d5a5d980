// The merge's threads: the board of units and the pool of workers (merge_stages.hpp).

#include "merge_stages.hpp"

#include <utility>

namespace nvtxpp::capture::merge {

stage_board::stage_board(merge_plan const& plan)
    : plan_{plan}, ended_(plan.units().size(), false), errors_(plan.units().size(), nullptr) {}

bool stage_board::may_take() const {
  auto const& units = plan_.units();
  return stopped_ || next_ >= units.size() || units[next_].per_input ||
         plan_.ordinal(next_) < appended_ + plan_.slots();
}

std::optional<std::size_t> stage_board::take() {
  std::unique_lock<std::mutex> lock{mu_};
  cv_.wait(lock, [&] { return may_take(); });
  if (stopped_ || next_ >= plan_.units().size()) {
    return std::nullopt;
  }
  return next_++;
}

void stage_board::end(std::size_t u, std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock{mu_};
    stopped_ = stopped_ || error != nullptr;  // units taken before it still end
    errors_[u] = std::move(error);
    ended_[u] = true;
  }
  cv_.notify_all();
}

stage_board::outcome stage_board::wait(std::size_t u) {
  std::unique_lock<std::mutex> lock{mu_};
  cv_.wait(lock, [&] { return ended_[u] || (stopped_ && u >= next_); });
  return outcome{ended_[u], errors_[u]};
}

stage_board::outcome stage_board::poll(std::size_t u) {
  std::lock_guard<std::mutex> lock{mu_};
  return outcome{ended_[u], errors_[u]};
}

void stage_board::appended(std::size_t u) {
  {
    std::lock_guard<std::mutex> lock{mu_};
    appended_ = plan_.ordinal(u) + 1;
  }
  cv_.notify_all();
}

void stage_board::stop() {
  {
    std::lock_guard<std::mutex> lock{mu_};
    stopped_ = true;
  }
  cv_.notify_all();
}

stage_workers::stage_workers(stage_board& board, std::size_t threads,
                             std::function<void(std::size_t)> run)
    : board_{board}, run_{std::move(run)} {
  try {
    for (std::size_t t = 0; t < threads; ++t) {
      threads_.emplace_back([this] { work(); });
    }
  } catch (...) {
    join();
    throw;
  }
}

stage_workers::~stage_workers() { join(); }

void stage_workers::join() noexcept {
  board_.stop();
  for (auto& t : threads_) {
    t.join();
  }
}

void stage_workers::work() {
  while (auto const u = board_.take()) {
    std::exception_ptr error;
    try {
      run_(*u);
    } catch (...) {
      error = std::current_exception();
    }
    board_.end(*u, std::move(error));
  }
}

}  // namespace nvtxpp::capture::merge
