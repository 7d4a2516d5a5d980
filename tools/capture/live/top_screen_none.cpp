// nvtxpp-capture top's screen in a build without ncurses (top_screen.hpp): it cannot be made,
// and top prints plain tables instead.

#include "top_screen.hpp"

#include <stdexcept>

namespace nvtxpp::capture::live {

top_screen::top_screen() {
  throw std::runtime_error("this build has no terminal screen (ncurses was not found)");
}

top_screen::~top_screen() = default;

void top_screen::close() {}

bool top_screen::handle_key(int /*timeout_ms*/, screen_view& /*v*/) { return false; }

void top_screen::draw(program_state const& /*p*/, live_snapshot const& /*snap*/,
                      screen_view const& /*v*/) {}

}  // namespace nvtxpp::capture::live
