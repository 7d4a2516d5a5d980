/// @file
/// @brief Building one NVTX event from a message and attributes. No formatting here.
#pragma once

#include <nvtxpp/attributes.hpp>
#include <nvtxpp/color.hpp>
#include <nvtxpp/config.hpp>
#include <nvtxpp/detail/atomic.hpp>
#include <nvtxpp/detail/nvtx.hpp>
#include <nvtxpp/domain.hpp>
#include <nvtxpp/registered_string.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cwchar>
#include <string>
#include <string_view>
#include <type_traits>

namespace nvtxpp {
inline namespace NVTXPP_ABI_NAMESPACE {
namespace detail {

template <typename T>
struct is_attribute_impl : std::false_type {};
template <>
struct is_attribute_impl<color> : std::true_type {};
template <>
struct is_attribute_impl<category> : std::true_type {};
template <>
struct is_attribute_impl<named_category> : std::true_type {};
template <>
struct is_attribute_impl<payload> : std::true_type {};

/// Base of attributes that set themselves on an event (struct payloads): they have
/// `template <typename D> void apply_to(event_builder&) const noexcept`.
struct self_applying_attribute {};

/// Colour, category and payload (scalar or struct) are attributes; every other argument is a
/// format argument.
template <typename T>
inline constexpr bool is_attribute = is_attribute_impl<remove_cvref_t<T>>::value ||
                                     std::is_base_of_v<self_applying_attribute, remove_cvref_t<T>>;

/// Payload attributes among Ts: an event carries at most one.
template <typename... Ts>
inline constexpr std::size_t payload_count =
    ((std::is_same_v<remove_cvref_t<Ts>, payload> ||
              std::is_base_of_v<self_applying_attribute, remove_cvref_t<Ts>>
          ? 1u
          : 0u) +
     ... + 0u);

template <typename... Ts>
inline constexpr bool all_attributes = (is_attribute<Ts> && ...);

template <typename... Ts>
inline constexpr std::size_t format_arg_count = ((is_attribute<Ts> ? 0u : 1u) + ... + 0u);

template <typename M>
inline constexpr bool is_text =
    std::is_convertible_v<M const&, char const*> || std::is_same_v<M, std::string> ||
    std::is_same_v<M, std::string_view> || std::is_convertible_v<M const&, wchar_t const*>;

template <typename M, typename D>
inline constexpr bool is_message = is_text<M> || std::is_same_v<M, registered_string_in<D>>;

/// The call-site cache of NVTXPP_SCOPE for a first argument of type T (taken with decltype, so
/// the argument is never evaluated twice). Only a `char const[N]` message, the type of a string
/// literal, is cached (the specialisation below); other messages pass through.
template <typename D, typename T>
struct literal_site {};

#if NVTXPP_ENABLED

/// The text NVTX receives for a null pointer.
inline constexpr char null_text[] = "(null)";

/// Counts one category name per domain: ids below 1024 are named once, through a lock-free
/// bitmap; larger ids are named on every use.
template <typename D>
inline void name_category_once(std::uint32_t id, char const* name) noexcept {
  static atomic_word<std::uint64_t> named[16];  // zero: constant-initialised
  if (id < 1024u) {
    auto& word = named[id / 64u];
    std::uint64_t const bit = std::uint64_t{1} << (id % 64u);
    if ((word.load_relaxed() & bit) != 0) return;
    if ((word.fetch_or_relaxed(bit) & bit) != 0) return;
  }
  nvtxDomainNameCategoryA(domain_handle<D>(), id, name != nullptr ? name : null_text);
}

/// An event under construction. Default colour: none yet.
struct event_builder {
  nvtxEventAttributes_t attr;
  nvtxPayloadData_t payload_data{};  // a struct payload's descriptor, which attr points to
  bool has_color = false;

  event_builder() noexcept : attr{} {
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  }

  void set(color c) noexcept {
    attr.colorType = NVTX_COLOR_ARGB;
    attr.color = c.argb();
    has_color = true;
  }
  void set(category c) noexcept { attr.category = c.id; }
  template <typename D>
  void set_named(named_category c) noexcept {
    name_category_once<D>(c.id, c.name);
    attr.category = c.id;
  }
  void set(payload p) noexcept {
    switch (p.type) {
      case payload_type::u64:
        attr.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
        attr.payload.ullValue = p.value.u64;
        break;
      case payload_type::i64:
        attr.payloadType = NVTX_PAYLOAD_TYPE_INT64;
        attr.payload.llValue = p.value.i64;
        break;
      case payload_type::f64:
        attr.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
        attr.payload.dValue = p.value.f64;
        break;
      case payload_type::u32:
        attr.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
        attr.payload.uiValue = p.value.u32;
        break;
      case payload_type::i32:
        attr.payloadType = NVTX_PAYLOAD_TYPE_INT32;
        attr.payload.iValue = p.value.i32;
        break;
      case payload_type::f32:
        attr.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
        attr.payload.fValue = p.value.f32;
        break;
      case payload_type::none:
        break;
    }
  }

  /// Attaches @p size bytes at @p data, laid out as schema @p schema (NVTX payload extension:
  /// an array of one nvtxPayloadData_t, its address in the payload, its length in reserved0).
  void set_payload_data(std::uint64_t schema, std::size_t size, void const* data) noexcept {
    payload_data.schemaId = schema;
    payload_data.size = size;
    payload_data.payload = data;
    attr.payloadType = NVTX_PAYLOAD_TYPE_EXT;
    attr.reserved0 = 1;
    attr.payload.ullValue =
        static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&payload_data));
  }

  /// Applies the attributes among @p args; format arguments are skipped.
  template <typename D, typename... Args>
  void apply(Args const&... args) noexcept {
    static_assert(payload_count<Args...> <= 1,
                  "an nvtxpp range or mark carries at most one payload (nvtxpp::payload or "
                  "nvtxpp::payload_of)");
    (apply_one<D>(args), ...);
  }

  template <typename D, typename T>
  void apply_one(T const& arg) noexcept {
    if constexpr (std::is_same_v<T, named_category>) {
      set_named<D>(arg);
    } else if constexpr (std::is_base_of_v<self_applying_attribute, T>) {
      arg.template apply_to<D>(*this);
    } else if constexpr (is_attribute<T>) {
      set(arg);
    }
  }

  void ascii(char const* text) noexcept {
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = text != nullptr ? text : null_text;
  }

  /// Gives the event its automatic colour if it has none and automatic colours are on.
  template <typename F>
  void default_color(F&& colour_of_name) noexcept {
    if (!has_color && auto_color_enabled()) set(colour_of_name());
  }
};

/// Ends a buffer of capacity @p n (>= 16) whose first n - 1 bytes are text that did not fit with
/// "...", cut at a UTF-8 character boundary. @return @p buf.
inline char const* end_with_ellipsis(char* buf, std::size_t n) noexcept {
  std::size_t cut = n - 4;
  while (cut > 0 && (static_cast<unsigned char>(buf[cut]) & 0xC0u) == 0x80u) --cut;
  std::memcpy(buf + cut, "...", 4);
  return buf;
}

/// Copies @p text into @p buf (capacity @p n >= 16), truncating long text with "..."; always
/// NUL-terminated. @return @p buf.
inline char const* copy_text(char* buf, std::size_t n, std::string_view text) noexcept {
  if (text.size() < n) {
    if (!text.empty()) std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    return buf;
  }
  std::memcpy(buf, text.data(), n - 1);
  return end_with_ellipsis(buf, n);
}

/// Puts a static message (any text type, or a registered string) into @p ev.
template <typename D, typename M>
inline void set_message(event_builder& ev, char* buf, M const& msg) noexcept {
  if constexpr (std::is_same_v<M, registered_string_in<D>>) {
    ev.attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    ev.attr.message.registered = msg.handle();
    ev.default_color([&] { return msg.auto_color_value(); });
  } else if constexpr (std::is_same_v<M, std::string_view>) {
    ev.ascii(copy_text(buf, NVTXPP_MESSAGE_BUFFER_SIZE, msg));
    ev.default_color([&] { return auto_color(ev.attr.message.ascii); });
  } else if constexpr (std::is_same_v<M, std::string>) {
    ev.ascii(msg.c_str());
    ev.default_color([&] { return auto_color(msg); });
  } else if constexpr (std::is_convertible_v<M const&, char const*>) {
    char const* const text = msg;
    ev.ascii(text);
    ev.default_color([&] { return auto_color(ev.attr.message.ascii); });
  } else {
    wchar_t const* text = msg;
    if (text == nullptr) {
      ev.ascii(nullptr);
    } else {
      ev.attr.messageType = NVTX_MESSAGE_TYPE_UNICODE;
      ev.attr.message.unicode = text;
    }
    ev.default_color([&] {
      return text == nullptr ? auto_color(null_text)
                             : auto_color(std::string_view{reinterpret_cast<char const*>(text),
                                                           std::wcslen(text) * sizeof(wchar_t)});
    });
  }
  static_cast<void>(buf);
}

/// A literal message: registered with NVTX the first time the site runs while a tool listens,
/// with its automatic colour computed then. Later calls whose message is the same array with
/// the same bytes (compared with the copy kept here) pass the handle; anything else falls back
/// to the plain text. Lock-free: a thread that finds registration in progress sends plain text.
template <typename D, std::size_t N>
class literal_site<D, char const (&)[N]> {
 public:
  /// @return whether @p text is this site's registered literal; sets @p handle and @p colour.
  bool find(char const* text, nvtxStringHandle_t& handle, color& colour) const noexcept {
    if (state_.load_acquire() != ready) return false;
    if (text != text_ || std::memcmp(copy_, text, N) != 0) return false;
    handle = handle_;
    colour = colour_;
    return true;
  }

  /// Whether no text has been registered here yet.
  bool vacant() const noexcept { return state_.load_relaxed() == empty; }

  /// Whether the array at @p text was registered here (perhaps with other bytes than now).
  bool holds(char const* text) const noexcept {
    return state_.load_acquire() == ready && text_ == text;
  }

  /// Registers @p text (a tool listens) unless registered or in progress. Cold: once a site.
  /// @return whether this call registered it.
  [[gnu::noinline]] bool enroll(char const* text) noexcept {
    if (!vacant()) return false;
    if (!domain_enabled<D>()) return false;  // no tool records this domain now: try later
    int expected = empty;
    if (!state_.compare_exchange_acquire(expected, busy)) return false;
    std::memcpy(copy_, text, N);
    copy_[N] = '\0';
    std::size_t length = 0;
    while (length < N && copy_[length] != '\0') ++length;
    handle_ = nvtxDomainRegisterStringA(domain_handle<D>(), copy_);
    colour_ = auto_color(std::string_view{copy_, length});
    text_ = text;
    state_.store_release(handle_ != nullptr ? ready : unusable);
    return handle_ != nullptr;
  }

 private:
  static constexpr int empty = 0;
  static constexpr int busy = 1;
  static constexpr int ready = 2;
  static constexpr int unusable = 3;  // the tool gave no handle: plain text from now on
  atomic_word<int> state_{empty};
  char const* text_ = nullptr;
  nvtxStringHandle_t handle_ = nullptr;
  color colour_{0};
  char copy_[N + 1] = {};
};

template <typename T>
struct is_literal_site_type : std::false_type {};
template <std::size_t N>
struct is_literal_site_type<char const (&)[N]> : std::true_type {};

/// Emits an event whose message is a registered string with a known automatic colour.
template <typename D, typename Op, typename... As>
inline void emit_registered(Op op, nvtxStringHandle_t handle, color colour,
                            As const&... attrs) noexcept {
  event_builder ev;
  ev.apply<D>(attrs...);
  ev.attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  ev.attr.message.registered = handle;
  ev.default_color([&] { return colour; });
  op(domain_handle<D>(), ev.attr);
}

/// Text arrays of N bytes in domain D given to the classes (which have no call site of their
/// own): a few literal_site slots, filled by the first texts seen while a tool listens and never
/// reused, so each costs at most one registration. Further texts of that length, and arrays whose
/// bytes changed since they took a slot, go as plain text.
///
/// One thread enrolls at a time (a flag taken without waiting: the others send plain text
/// meanwhile). Without it, threads meeting one text first at once each took a slot for it, and
/// four of them filled every slot: the next text of that length never got one.
template <typename D, std::size_t N>
struct literal_cache {
  static constexpr std::size_t slots = 4;
  static inline literal_site<D, char const (&)[N]> site[slots];
  static inline atomic_word<int> enrolling{0};

  static bool find(char const* text, nvtxStringHandle_t& handle, color& colour) noexcept {
    for (auto const& s : site) {
      if (s.find(text, handle, colour)) return true;
    }
    return false;
  }

  [[gnu::noinline]] static bool enroll(char const* text, nvtxStringHandle_t& handle,
                                       color& colour) noexcept {
    int expected = 0;
    if (!enrolling.compare_exchange_acquire(expected, 1)) return false;  // another thread enrolls
    bool const found = enroll_alone(text, handle, colour);
    enrolling.store_release(0);
    return found;
  }

 private:
  static bool enroll_alone(char const* text, nvtxStringHandle_t& handle, color& colour) noexcept {
    if (find(text, handle, colour)) return true;  // enrolled by the thread that had the flag
    // An array registered before with other bytes is a buffer that changes: plain text from now
    // on, rather than a slot for each of its contents.
    for (auto const& s : site) {
      if (s.holds(text)) return false;
    }
    bool vacancy = false;
    for (auto const& s : site) vacancy = vacancy || s.vacant();
    if (!vacancy || !domain_enabled<D>()) return false;  // the tool is asked once, if at all
    for (auto& s : site) {
      if (s.vacant() && s.enroll(text)) return s.find(text, handle, colour);
    }
    return false;
  }
};

/// Longest text array the classes cache (longer ones are rare and cut by tools anyway).
inline constexpr std::size_t max_cached_literal = 256;

template <typename M>
inline constexpr bool is_cached_text_array =
    std::is_array_v<M>&& std::is_same_v<std::remove_cv_t<std::remove_extent_t<M>>, char>&&
        std::extent_v<M> <= max_cached_literal;

/// Emits one event with @p msg as its text (a tool listens).
template <typename D, typename Op, typename M, typename... As>
inline void emit_text(Op op, M const& msg, As const&... attrs) noexcept {
  event_builder ev;
  ev.apply<D>(attrs...);
  char buf[std::is_same_v<M, std::string_view> ? NVTXPP_MESSAGE_BUFFER_SIZE : 1];
  set_message<D>(ev, buf, msg);
  op(domain_handle<D>(), ev.attr);
}

/// Emits one event with a static message when a tool may listen: @p op receives the domain
/// handle and the attributes. @return whether the event was emitted.
///
/// The test is tool_attached(): NVTX's own inline check with no tool, no call into a tool that
/// listens. A text array (a string literal, most often) goes as a registered string through
/// literal_cache when it has a slot there: no hashing and no copying of its text per event.
template <typename D, typename Op, typename M, typename... As>
inline bool emit_static(Op op, M const& msg, As const&... attrs) noexcept {
  if (!tool_attached<D>()) return false;
  if constexpr (is_cached_text_array<M>) {
    using cache = literal_cache<D, std::extent_v<M>>;
    nvtxStringHandle_t handle = nullptr;
    color colour{0};
    if (cache::find(msg, handle, colour) || cache::enroll(msg, handle, colour)) {
      emit_registered<D>(op, handle, colour, attrs...);
      return true;
    }
  }
  emit_text<D>(op, msg, attrs...);
  return true;
}

/// emit_static through a call site's cache (NVTXPP_SCOPE): a literal goes as its registered
/// string, found without a search.
template <typename D, typename T, typename Op, typename M, typename... As>
inline bool emit_at_site(literal_site<D, T>& site, Op op, M const& msg,
                         As const&... attrs) noexcept {
  if constexpr (is_literal_site_type<T>::value && std::is_same_v<M const&, T>) {
    if (!tool_attached<D>()) return false;
    nvtxStringHandle_t handle = nullptr;
    color colour{0};
    if (site.find(msg, handle, colour) || (site.enroll(msg) && site.find(msg, handle, colour))) {
      emit_registered<D>(op, handle, colour, attrs...);
      return true;
    }
    // Registration under way in another thread, refused, or the array's bytes changed: plain
    // text, not the domain's literal_cache (a site's literal would take a slot there too).
    emit_text<D>(op, msg, attrs...);
    return true;
  } else {
    static_cast<void>(site);
  }
  return emit_static<D>(op, msg, attrs...);
}

#endif  // NVTXPP_ENABLED

}  // namespace detail
}  // namespace NVTXPP_ABI_NAMESPACE
}  // namespace nvtxpp
