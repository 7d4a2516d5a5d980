/// @file
/// @brief Domains: tag types naming an NVTX domain, and the global (default) domain.
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/nvtx.hpp>

#include <type_traits>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @brief The global NVTX domain, where ranges go when no domain is named.
struct global_domain {
  static constexpr char const* name = nullptr;  ///< the global domain has no name
};

namespace detail {

template <typename D, typename = void>
struct is_domain : std::false_type {};
template <typename D>
struct is_domain<D, std::void_t<decltype(D::name)>>
    : std::is_convertible<decltype(D::name), char const*> {};

#if NVTXPP_ENABLED
/// The NVTX handle of domain D, created on first use (a function-local static: after the first
/// call, one load and a branch; no lock).
template <typename D>
[[nodiscard]] inline nvtxDomainHandle_t domain_handle() noexcept {
  static_assert(is_domain<D>::value,
                "a domain is a type with `static constexpr char const* name = \"...\";`");
  if constexpr (std::is_same_v<D, global_domain>) {
    return nullptr;
  } else {
    static nvtxDomainHandle_t const handle = nvtxDomainCreateA(D::name);
    return handle;
  }
}

/// Whether a tool listens to domain D. Without a tool this is a load and a compare; with one,
/// a call into the tool.
template <typename D>
[[nodiscard]] inline bool domain_enabled() noexcept {
  return nvtxDomainIsEnabled(domain_handle<D>()) != 0;
}

/// NVTX's own test before it passes a push to a tool: is the push slot of its function table set?
/// (Null when no tool is attached; NVTX's initialiser before the first call.) @return 1 set,
/// 0 not set, -1 when this NVTX's table has no such slot (read through SFINAE).
template <typename G>
[[nodiscard]] constexpr auto push_slot(G const& globals, int) noexcept
    -> decltype(globals.nvtxDomainRangePushEx_impl_fnptr != nullptr, 0) {
  return globals.nvtxDomainRangePushEx_impl_fnptr != nullptr ? 1 : 0;
}
template <typename G>
[[nodiscard]] constexpr int push_slot(G const&, long) noexcept {
  return -1;
}

/// Whether events of domain D may reach a tool: false means surely not (no tool attached). The
/// static event paths use it instead of domain_enabled(): without a tool it is the same inline
/// load and compare NVTX makes, and with a tool it saves a call into the tool per event (a tool
/// that disabled the domain drops the event itself). Formatted events ask domain_enabled() too,
/// so that no text is formatted for a domain nobody records.
template <typename D>
[[nodiscard]] inline bool tool_attached() noexcept {
#if defined(NVTX_VERSIONED_IDENTIFIER) && !defined(NVTX_NO_IMPL)
  int const slot = push_slot(NVTX_VERSIONED_IDENTIFIER(nvtxGlobals), 0);
  if (slot >= 0) return slot == 1;
#endif
  return domain_enabled<D>();
}
#endif

}  // namespace detail

/// @brief Whether a tool (Nsight Systems, nvtxpp-capture, the test recorder...) listens to
/// domain D. Always false when annotations are compiled out.
template <typename D = global_domain>
[[nodiscard]] inline bool is_enabled() noexcept {
#if NVTXPP_ENABLED
  return detail::domain_enabled<D>();
#else
  return false;
#endif
}

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp

/// @brief Defines a domain tag type in one line: `NVTXPP_DEFINE_DOMAIN(io_domain, "My I/O");`.
#define NVTXPP_DEFINE_DOMAIN(tag, domain_name)       \
  struct tag {                                       \
    static constexpr char const* name = domain_name; \
  }
