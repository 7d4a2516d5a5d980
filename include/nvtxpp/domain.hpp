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

/// Whether a tool listens to domain D. Without a tool this is a load and a compare.
template <typename D>
[[nodiscard]] inline bool domain_enabled() noexcept {
  return nvtxDomainIsEnabled(domain_handle<D>()) != 0;
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
