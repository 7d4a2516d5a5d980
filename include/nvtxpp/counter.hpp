/// @file
/// @brief Counters: named values sampled over time (NVTX counters extension), and gauges.
///
/// @code
/// nvtxpp::counter<std::int64_t> bytes_in_flight{"bytes in flight", nvtxpp::counter_unit{"B"}};
/// bytes_in_flight.sample(4096);
/// { nvtxpp::gauge g{bytes_in_flight, 4096}; copy(); }  // +4096 now, -4096 at scope exit
/// @endcode
/// A counter is registered with the tool once, lazily, the first time it is sampled while a tool
/// is attached. With no tool a sample costs NVTX's own inline check (a load and a branch).
#pragma once

#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/nvtx.hpp>
#include <nvtxpp/domain.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#if NVTXPP_ENABLED
NVTXPP_DETAIL_NVTX_HEADERS_BEGIN
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>
NVTXPP_DETAIL_NVTX_HEADERS_END
#endif

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {

/// @brief Where a counter's value is defined: NVTX's scope of the counter.
enum class counter_scope : std::uint8_t {
  none,     ///< no scope given (the tool decides)
  process,  ///< one value per process (NVTX_SCOPE_CURRENT_SW_PROCESS)
  thread,   ///< one value per thread (NVTX_SCOPE_CURRENT_SW_THREAD)
  machine,  ///< one value per machine (NVTX_SCOPE_CURRENT_HW_MACHINE)
};

/// @brief Why a sample has no value (nvtxCounterSampleNoValue's reason).
enum class no_value_reason : std::uint8_t {
  zero = 0,         ///< the value is zero (NVTX_COUNTER_SAMPLE_ZERO)
  unchanged = 1,    ///< unchanged since the last sample (NVTX_COUNTER_SAMPLE_UNCHANGED)
  unavailable = 2,  ///< could not be read (NVTX_COUNTER_SAMPLE_UNAVAILABLE)
};

/// @brief A counter option: its description. The text must outlive the counter (a literal).
struct counter_description {
  char const* text;  ///< description
};

/// @brief A counter option: its unit ("B", "chunks", ...). The text must outlive the counter.
struct counter_unit {
  char const* text;  ///< unit, case insensitive for tools
};

/// @brief A counter option: the range tools should draw (NVTX counter semantics' limits).
template <typename T>
struct counter_limits {
  T min;  ///< lower limit
  T max;  ///< upper limit
};
template <typename T>
counter_limits(T, T) -> counter_limits<T>;

namespace detail {

template <typename T>
inline constexpr bool is_counter_value =
    std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, long double> &&
    (std::is_floating_point_v<T> || sizeof(T) <= 8);

/// NVTX payload entry type of a counter's value type (values as in nvToolsExtPayload.h).
template <typename T>
constexpr std::uint64_t counter_entry_type() noexcept {
  if constexpr (std::is_same_v<T, float>) {
    return 19;  // NVTX_PAYLOAD_ENTRY_TYPE_FLOAT
  } else if constexpr (std::is_same_v<T, double>) {
    return 20;  // NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE
  } else {
    // NVTX_PAYLOAD_ENTRY_TYPE_INT8 = 11 ... UINT64 = 18: signed, unsigned per width.
    constexpr std::uint64_t width = sizeof(T) == 1   ? 0
                                    : sizeof(T) == 2 ? 1
                                    : sizeof(T) == 4 ? 2
                                                     : 3;
    return 11 + 2 * width + (std::is_signed_v<T> ? 0 : 1);
  }
}

template <typename T>
struct is_counter_limits : std::false_type {};
template <typename T>
struct is_counter_limits<counter_limits<T>> : std::true_type {};

template <typename T>
inline constexpr bool is_counter_option =
    std::is_same_v<T, counter_description> || std::is_same_v<T, counter_unit> ||
    std::is_same_v<T, counter_scope> || is_counter_limits<T>::value;

/// Counter registration states kept in the id slot. A tool refuses a counter with
/// NVTX_COUNTER_ID_NONE (0) and may give any other id, small ones included (Nsight Systems
/// gives 1, 2, ...): the two other states take the two largest values, which no tool hands out.
inline constexpr std::uint64_t counter_unregistered = 0;
inline constexpr std::uint64_t counter_busy = ~std::uint64_t{0};
inline constexpr std::uint64_t counter_unusable =
    ~std::uint64_t{0} - 1;  // refused: never asked again

/// Whether a value of the id slot is an id a tool gave.
constexpr bool is_counter_id(std::uint64_t v) noexcept {
  return v != counter_unregistered && v < counter_unusable;
}

}  // namespace detail

/// @brief A counter of value type T (an integer or floating-point type) in domain D.
///
/// Not copyable or movable (tools know it by its id); usually a global or a `static`. The name
/// and option texts must outlive it. Samples made by other threads while the first one
/// registers the counter are dropped (once per counter, while a tool is attached).
template <typename D, typename T>
class counter_in {
  static_assert(detail::is_counter_value<T>,
                "nvtxpp::counter<T>: T must be an integer or floating-point type (not bool, not "
                "long double)");

 public:
  using value_type = T;  ///< the sampled type

  /// @brief A counter named @p name, with options in any order: counter_description,
  /// counter_unit, counter_limits, counter_scope.
  template <typename... Options>
  constexpr explicit counter_in(char const* name, Options const&... options) noexcept
      : name_{name} {
    static_assert((detail::is_counter_option<Options> && ...),
                  "nvtxpp::counter: options are counter_description, counter_unit, "
                  "counter_limits and counter_scope");
    (set(options), ...);
  }

  counter_in(counter_in const&) = delete;
  counter_in& operator=(counter_in const&) = delete;

  /// @brief Records @p value.
  void sample(T value) noexcept {
#if NVTXPP_ENABLED
    std::uint64_t const id = id_if_listened();
    if (id == 0) return;
    if constexpr (std::is_same_v<T, double>) {
      nvtxCounterSampleFloat64(detail::domain_handle<D>(), id, value);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 8) {
      nvtxCounterSampleInt64(detail::domain_handle<D>(), id, static_cast<std::int64_t>(value));
    } else {
      nvtxCounterSample(detail::domain_handle<D>(), id, &value, sizeof value);
    }
#else
    static_cast<void>(value);
#endif
  }

  /// @brief Records a sample without a value, saying why.
  void sample_no_value(no_value_reason reason) noexcept {
#if NVTXPP_ENABLED
    std::uint64_t const id = id_if_listened();
    if (id == 0) return;
    nvtxCounterSampleNoValue(detail::domain_handle<D>(), id, static_cast<std::uint8_t>(reason));
#else
    static_cast<void>(reason);
#endif
  }

  /// @brief Submits @p count values at once (one NVTX batch; tools time-stamp it on receipt).
  void sample_batch(T const* values, std::size_t count) noexcept {
#if NVTXPP_ENABLED
    if (count == 0 || values == nullptr) return;
    std::uint64_t const id = id_if_listened();
    if (id == 0) return;
    nvtxCounterBatch_t batch{};
    batch.counterId = id;
    batch.counters = values;
    batch.countersSize = count * sizeof(T);
    nvtxCounterBatchSubmit(detail::domain_handle<D>(), &batch);
#else
    static_cast<void>(values);
    static_cast<void>(count);
#endif
  }

  /// @brief Submits a contiguous container of T (std::array, std::vector, a C array...).
  template <typename C, typename = decltype(std::data(std::declval<C const&>()))>
  void sample_batch(C const& values) noexcept {
    static_assert(
        std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(std::data(values))>>, T>,
        "nvtxpp::counter<T>::sample_batch: the values must be of the counter's type T");
    sample_batch(std::data(values), std::size(values));
  }

  /// @brief Adds @p delta to the counter's running total and samples the total. The total is
  /// kept whether or not a tool listens (one atomic add), so it is right when one attaches.
  /// @return the new total
  T add(T delta) noexcept {
    T total;
    if constexpr (std::is_integral_v<T>) {
      total = static_cast<T>(total_.fetch_add(delta, std::memory_order_relaxed) + delta);
    } else {
      T old = total_.load(std::memory_order_relaxed);
      while (!total_.compare_exchange_weak(old, old + delta, std::memory_order_relaxed)) {
      }
      total = old + delta;
    }
    sample(total);
    return total;
  }

  /// @brief Subtracts @p delta from the running total and samples it. @return the new total
  T subtract(T delta) noexcept {
    T total;
    if constexpr (std::is_integral_v<T>) {
      total = static_cast<T>(total_.fetch_sub(delta, std::memory_order_relaxed) - delta);
    } else {
      T old = total_.load(std::memory_order_relaxed);
      while (!total_.compare_exchange_weak(old, old - delta, std::memory_order_relaxed)) {
      }
      total = old - delta;
    }
    sample(total);
    return total;
  }

  /// @brief The running total that add() and subtract() keep.
  [[nodiscard]] T total() const noexcept { return total_.load(std::memory_order_relaxed); }

  /// @brief The counter's name.
  [[nodiscard]] constexpr char const* name() const noexcept { return name_; }

 private:
  constexpr void set(counter_description d) noexcept { description_ = d.text; }
  constexpr void set(counter_unit u) noexcept { unit_ = u.text; }
  constexpr void set(counter_scope s) noexcept { scope_ = s; }
  template <typename L>
  constexpr void set(counter_limits<L> l) noexcept {
    static_assert(std::is_arithmetic_v<L>, "nvtxpp::counter_limits: limits are numbers");
    has_limits_ = true;
    min_ = static_cast<T>(l.min);
    max_ = static_cast<T>(l.max);
  }

#if NVTXPP_ENABLED
  /// The counter's id when a tool listens and has it registered, else 0. Without a tool: NVTX's
  /// inline check of its function table, nothing more.
  std::uint64_t id_if_listened() noexcept {
    if (!detail::tool_attached<D>()) return 0;
    std::uint64_t const id = id_.load(std::memory_order_acquire);
    if (detail::is_counter_id(id)) return id;
    return id == detail::counter_unregistered ? enroll() : 0;
  }

  /// Registers the counter (cold: once per counter). @return its id, or 0.
  [[gnu::noinline]] std::uint64_t enroll() noexcept {
    std::uint64_t expected = detail::counter_unregistered;
    if (!id_.compare_exchange_strong(expected, detail::counter_busy, std::memory_order_acquire)) {
      return detail::is_counter_id(expected) ? expected : 0;
    }
    nvtxSemanticsCounter_t semantics{};
    semantics.header.structSize = sizeof semantics;
    semantics.header.semanticId = NVTX_SEMANTIC_ID_COUNTERS_V1;
    semantics.header.version = NVTX_COUNTER_SEMANTIC_VERSION;
    semantics.flags = NVTX_COUNTER_FLAGS_NONE;
    semantics.unit = unit_;
    semantics.unitScaleNumerator = 1;
    semantics.unitScaleDenominator = 1;
    semantics.limitType = NVTX_COUNTER_LIMIT_UNDEFINED;
    if (has_limits_) {
      semantics.flags |= NVTX_COUNTER_FLAG_LIMITS;
      if constexpr (std::is_floating_point_v<T>) {
        semantics.limitType = NVTX_COUNTER_LIMIT_F64;
        semantics.min.f64 = static_cast<double>(min_);
        semantics.max.f64 = static_cast<double>(max_);
      } else if constexpr (std::is_signed_v<T>) {
        semantics.limitType = NVTX_COUNTER_LIMIT_I64;
        semantics.min.i64 = static_cast<std::int64_t>(min_);
        semantics.max.i64 = static_cast<std::int64_t>(max_);
      } else {
        semantics.limitType = NVTX_COUNTER_LIMIT_U64;
        semantics.min.u64 = static_cast<std::uint64_t>(min_);
        semantics.max.u64 = static_cast<std::uint64_t>(max_);
      }
    }
    nvtxCounterAttr_t attr{};
    attr.structSize = sizeof attr;
    attr.schemaId = detail::counter_entry_type<T>();
    attr.name = name_ != nullptr ? name_ : "(null)";
    attr.description = description_;
    switch (scope_) {
      case counter_scope::process:
        attr.scopeId = NVTX_SCOPE_CURRENT_SW_PROCESS;
        break;
      case counter_scope::thread:
        attr.scopeId = NVTX_SCOPE_CURRENT_SW_THREAD;
        break;
      case counter_scope::machine:
        attr.scopeId = NVTX_SCOPE_CURRENT_HW_MACHINE;
        break;
      case counter_scope::none:
        attr.scopeId = NVTX_SCOPE_NONE;
        break;
    }
    bool const has_semantics = unit_ != nullptr || has_limits_;
    attr.semantics = has_semantics ? &semantics.header : nullptr;
    attr.counterId = NVTX_COUNTER_ID_NONE;
    std::uint64_t const id = nvtxCounterRegister(detail::domain_handle<D>(), &attr);
    bool const usable = detail::is_counter_id(id);
    id_.store(usable ? id : detail::counter_unusable, std::memory_order_release);
    return usable ? id : 0;
  }
#endif

  char const* name_;
  char const* description_ = nullptr;
  char const* unit_ = nullptr;
  counter_scope scope_ = counter_scope::none;
  bool has_limits_ = false;
  T min_{};
  T max_{};
  std::atomic<T> total_{};
#if NVTXPP_ENABLED
  std::atomic<std::uint64_t> id_{detail::counter_unregistered};
#endif
};

/// @brief A counter in the global domain.
template <typename T>
using counter = counter_in<global_domain, T>;

/// @brief Adds a quantity to a counter's running total for its lifetime: add() on construction,
/// subtract() on destruction (bytes or requests in flight). Neither copyable, movable nor on the
/// heap. The domain and type come from the counter: `nvtxpp::gauge g{bytes_in_flight, n};`.
template <typename D, typename T>
class gauge {
 public:
  /// @brief Adds @p amount to @p c now; subtracts it when this gauge ends.
  gauge(counter_in<D, T>& c, T amount) noexcept : counter_{c}, amount_{amount} {
    counter_.add(amount_);
  }
  /// @brief Subtracts the amount added.
  ~gauge() noexcept { counter_.subtract(amount_); }

  gauge(gauge const&) = delete;
  gauge& operator=(gauge const&) = delete;
  gauge(gauge&&) = delete;
  gauge& operator=(gauge&&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;

 private:
  counter_in<D, T>& counter_;
  T amount_;
};

template <typename D, typename T, typename A>
gauge(counter_in<D, T>&, A) -> gauge<D, T>;

}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
