// The recorder core's naming callbacks (cold: lock, intern, allocate): domains, registered
// strings, categories, threads, resources, CUDA handles and user synchronisation objects.
// Their text is interned once; events refer to it by id (see core.cpp, format.hpp).

#include "core_internal.hpp"

#include <type_traits>

#pragma GCC visibility push(hidden)  // as in core_internal.hpp
namespace nvtxpp::recording::detail {

// ---------------------------------------------------------------------------------------------
// Naming callbacks (cold: lock, intern, allocate).

/// Interns `text` (under the lock) and returns its id.
std::uint32_t intern_locked(name_state& s, std::string const& text) {
  auto [it, fresh] = s.string_ids.try_emplace(text, 0U);
  if (fresh) {
    it->second = static_cast<std::uint32_t>(s.tables.strings.size());
    s.tables.strings.push_back(text);
    note_new_text(text, it->second);
    if (published_hooks().string_defined != nullptr) {
      published_hooks().string_defined(it->second, text);
    }
  }
  return it->second;
}

/// Text of a naming call's argument, capped like messages.
struct name_text {
  std::string text;
  std::uint8_t flags = 0;
};

name_text text_of(char const* s) {
  name_text n;
  if (s == nullptr) {
    n.text = "(null)";
    n.flags = flag::null_message;
    return n;
  }
  std::size_t len = ::strnlen(s, testing::max_message_bytes + 1);
  if (len > testing::max_message_bytes) {
    len = utf8_cut(s, testing::max_message_bytes);
    n.flags = flag::truncated;
  }
  n.text.assign(s, len);
  return n;
}

name_text text_of(wchar_t const* s) {
  name_text n;
  if (s == nullptr) {
    n.text = "(null)";
    n.flags = flag::null_message;
    return n;
  }
  bool truncated = false;
  n.text = wide_to_string(s, truncated);
  n.flags = truncated ? flag::truncated : std::uint8_t{0};
  return n;
}

name_text text_of(std::int32_t type, nvtxMessageValue_t const& v, name_state& s) {
  switch (type) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return text_of(v.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return text_of(v.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (v.registered != nullptr) {
        return {s.tables.string_at(reinterpret_cast<string_rec const*>(v.registered)->id),
                flag::registered};
      }
      return {"(null)", flag::null_message};
    default:
      return {};
  }
}

/// Records a naming event whose text is the interned string `id`.
void naming_event(event_type type, std::uint32_t domain, std::uint32_t string_id,
                  std::uint8_t text_flags, fields f) noexcept {
  if (!on()) {
    return;
  }
  if (thread_state* t = self()) {
    message_src m;
    m.kind = message_kind::string_id;
    m.string_id = string_id;
    m.flags = text_flags;
    write_record(t, type, domain, f, m);
  }
}

template <class Char>
void name_category(std::uint32_t domain, std::uint32_t category, Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    std::int64_t const ticks = raw_ticks();
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
      s.tables.category_names[{domain, category}].emplace_back(ticks, id);
      if (published_hooks().category_named != nullptr) {
        published_hooks().category_named(domain, category, ticks, id);
      }
    }
    fields f;
    f.flags = flag::has_category;
    f.category = category;
    naming_event(event_type::name_category, domain, id, n.flags, f);
  } catch (...) {
    // Out of memory while naming: the name is lost, the program goes on.
  }
}

template <class Char>
void name_thread(std::uint32_t tid, Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    std::int64_t const ticks = raw_ticks();
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
      s.tables.thread_names[tid].emplace_back(ticks, id);
      if (published_hooks().thread_named != nullptr) {
        published_hooks().thread_named(tid, ticks, id);
      }
    }
    fields f;
    f.flags = flag::has_id;
    f.id = tid;
    naming_event(event_type::name_thread, 0, id, n.flags, f);
  } catch (...) {
  }
}

template <class Char>
void name_resource(resource_kind kind, std::uint64_t handle, Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
    }
    fields f;
    f.flags = flag::has_id | flag::has_category;
    f.id = handle;
    f.category = static_cast<std::uint32_t>(kind);
    naming_event(event_type::name_resource, 0, id, n.flags, f);
  } catch (...) {
  }
}

void NVTX_API cb_name_category_a(std::uint32_t c, char const* n) { name_category(0, c, n); }
void NVTX_API cb_name_category_w(std::uint32_t c, wchar_t const* n) { name_category(0, c, n); }
void NVTX_API cb_domain_name_category_a(nvtxDomainHandle_t d, std::uint32_t c, char const* n) {
  name_category(domain_index(d), c, n);
}
void NVTX_API cb_domain_name_category_w(nvtxDomainHandle_t d, std::uint32_t c, wchar_t const* n) {
  name_category(domain_index(d), c, n);
}
void NVTX_API cb_name_thread_a(std::uint32_t tid, char const* n) { name_thread(tid, n); }
void NVTX_API cb_name_thread_w(std::uint32_t tid, wchar_t const* n) { name_thread(tid, n); }

template <class Char>
nvtxDomainHandle_t create_domain(Char const* name) noexcept {
  try {
    name_text n = text_of(name);
    domain_rec* rec = nullptr;
    std::uint32_t id = 0;
    {
      auto& s = state();
      std::lock_guard lock{s.mutex};
      id = intern_locked(s, n.text);
      auto [it, fresh] = s.domains_by_name.try_emplace(n.text, nullptr);
      if (fresh) {
        auto index = static_cast<std::uint32_t>(s.tables.domains.size());
        s.tables.domains.push_back(n.text);
        it->second = &s.domain_recs.emplace_back(domain_rec{index});
        note_new_domain(n.text, *it->second);
        if (published_hooks().domain_defined != nullptr) {
          published_hooks().domain_defined(index, n.text);
        }
      }
      rec = it->second;
    }
    naming_event(event_type::domain_create, rec->index, id, n.flags, fields{});
    return reinterpret_cast<nvtxDomainHandle_t>(rec);
  } catch (...) {
    return nullptr;  // NVTX treats a null domain as the global one
  }
}

nvtxDomainHandle_t NVTX_API cb_domain_create_a(char const* n) { return create_domain(n); }
nvtxDomainHandle_t NVTX_API cb_domain_create_w(wchar_t const* n) { return create_domain(n); }
void NVTX_API cb_domain_destroy(nvtxDomainHandle_t d) {
  // The handle stays valid (NVTX allows late use by other threads); only the call is recorded.
  if (on()) {
    if (thread_state* t = self()) {
      write_record(t, event_type::domain_destroy, domain_index(d), fields{}, message_src{});
    }
  }
}

template <class Char>
nvtxStringHandle_t register_string(nvtxDomainHandle_t d, Char const* text) noexcept {
  if (text == nullptr) {
    return nullptr;  // a later use reads as a null message
  }
  try {
    name_text n = text_of(text);
    auto& s = state();
    std::lock_guard lock{s.mutex};
    std::uint32_t const id = intern_locked(s, n.text);
    auto [it, fresh] = s.registered.try_emplace({domain_index(d), n.text}, nullptr);
    if (fresh) {
      it->second = &s.string_recs.emplace_back(string_rec{id});
    }
    return reinterpret_cast<nvtxStringHandle_t>(it->second);
  } catch (...) {
    return nullptr;
  }
}

nvtxStringHandle_t NVTX_API cb_register_string_a(nvtxDomainHandle_t d, char const* s) {
  return register_string(d, s);
}
nvtxStringHandle_t NVTX_API cb_register_string_w(nvtxDomainHandle_t d, wchar_t const* s) {
  return register_string(d, s);
}

resource_kind kind_of(std::int32_t identifier_type) noexcept {
  constexpr auto make = [](std::uint32_t cls, std::uint32_t index) {
    return static_cast<std::int32_t>((cls << 16U) | index);
  };
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_POINTER) return resource_kind::generic_pointer;
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_HANDLE) return resource_kind::generic_handle;
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_THREAD_NATIVE) return resource_kind::os_thread;
  if (identifier_type == NVTX_RESOURCE_TYPE_GENERIC_THREAD_POSIX) {
    return resource_kind::posix_thread;
  }
  if (identifier_type == make(4, 1)) return resource_kind::cu_device;
  if (identifier_type == make(4, 2)) return resource_kind::cu_context;
  if (identifier_type == make(4, 3)) return resource_kind::cu_stream;
  if (identifier_type == make(4, 4)) return resource_kind::cu_event;
  if (identifier_type == make(5, 0)) return resource_kind::cuda_device;
  if (identifier_type == make(5, 1)) return resource_kind::cuda_stream;
  if (identifier_type == make(5, 2)) return resource_kind::cuda_event;
  return resource_kind::unknown;
}

nvtxResourceHandle_t NVTX_API cb_resource_create(nvtxDomainHandle_t d,
                                                 nvtxResourceAttributes_t* a) {
  if (a == nullptr) {
    return nullptr;
  }
  try {
    auto& s = state();
    resource_rec* rec = nullptr;
    name_text n;
    std::uint32_t id = 0;
    {
      std::lock_guard lock{s.mutex};
      n = text_of(a->messageType, a->message, s);
      id = intern_locked(s, n.text);
      rec = &s.resource_recs.emplace_back(
          resource_rec{domain_index(d), kind_of(a->identifierType), a->identifier.ullValue});
    }
    fields f;
    f.flags = flag::has_id | flag::has_category;
    f.id = rec->identifier;
    f.category = static_cast<std::uint32_t>(rec->kind);
    naming_event(event_type::name_resource, rec->domain, id, n.flags, f);
    return reinterpret_cast<nvtxResourceHandle_t>(rec);
  } catch (...) {
    return nullptr;
  }
}

void NVTX_API cb_resource_destroy(nvtxResourceHandle_t h) {
  if (h == nullptr || !on()) {
    return;
  }
  auto const* rec = reinterpret_cast<resource_rec const*>(h);
  if (thread_state* t = self()) {
    fields f;
    f.flags = flag::has_id;
    f.id = rec->identifier;
    write_record(t, event_type::resource_destroy, rec->domain, f, message_src{});
  }
}

void NVTX_API cb_initialize(void const*) {}

// CUDA driver and runtime naming. The handle types are pointers or ints; NVTX passes them
// through unchanged.
template <resource_kind K, class H, class Char>
void NVTX_API cb_name_handle(H handle, Char const* name) {
  std::uint64_t value = 0;
  if constexpr (std::is_pointer_v<H>) {
    value = reinterpret_cast<std::uintptr_t>(handle);
  } else {
    value = static_cast<std::uint64_t>(static_cast<std::int64_t>(handle));
  }
  name_resource(K, value, name);
}

// User synchronisation objects.
nvtxSyncUser_t NVTX_API cb_sync_create(nvtxDomainHandle_t d, nvtxSyncUserAttributes_t const* a) {
  try {
    auto& s = state();
    sync_rec* rec = nullptr;
    name_text n;
    std::uint32_t id = 0;
    {
      std::lock_guard lock{s.mutex};
      if (a != nullptr) {
        n = text_of(a->messageType, a->message, s);
      }
      id = intern_locked(s, n.text);
      rec = &s.sync_recs.emplace_back(sync_rec{domain_index(d)});
    }
    fields f;
    f.flags = flag::has_id;
    f.id = reinterpret_cast<std::uintptr_t>(rec);
    naming_event(event_type::sync_create, rec->domain, id, n.flags, f);
    return reinterpret_cast<nvtxSyncUser_t>(rec);
  } catch (...) {
    return nullptr;
  }
}

template <event_type E>
void NVTX_API cb_sync(nvtxSyncUser_t h) {
  if (h == nullptr || !on()) {
    return;
  }
  if (thread_state* t = self()) {
    fields f;
    f.flags = flag::has_id;
    f.id = reinterpret_cast<std::uintptr_t>(h);
    write_record(t, E, reinterpret_cast<sync_rec const*>(h)->domain, f, message_src{});
  }
}

// The instances attach() installs.
template void NVTX_API cb_name_handle<resource_kind::cu_device, int, char>(int, char const*);
template void NVTX_API cb_name_handle<resource_kind::cu_device, int, wchar_t>(int, wchar_t const*);
template void NVTX_API cb_name_handle<resource_kind::cu_context, void*, char>(void*, char const*);
template void NVTX_API cb_name_handle<resource_kind::cu_context, void*, wchar_t>(void*,
                                                                                 wchar_t const*);
template void NVTX_API cb_name_handle<resource_kind::cu_stream, void*, char>(void*, char const*);
template void NVTX_API cb_name_handle<resource_kind::cu_stream, void*, wchar_t>(void*,
                                                                                wchar_t const*);
template void NVTX_API cb_name_handle<resource_kind::cu_event, void*, char>(void*, char const*);
template void NVTX_API cb_name_handle<resource_kind::cu_event, void*, wchar_t>(void*,
                                                                               wchar_t const*);
template void NVTX_API cb_name_handle<resource_kind::cuda_device, int, char>(int, char const*);
template void NVTX_API cb_name_handle<resource_kind::cuda_device, int, wchar_t>(int,
                                                                                wchar_t const*);
template void NVTX_API cb_name_handle<resource_kind::cuda_stream, void*, char>(void*, char const*);
template void NVTX_API cb_name_handle<resource_kind::cuda_stream, void*, wchar_t>(void*,
                                                                                  wchar_t const*);
template void NVTX_API cb_name_handle<resource_kind::cuda_event, void*, char>(void*, char const*);
template void NVTX_API cb_name_handle<resource_kind::cuda_event, void*, wchar_t>(void*,
                                                                                 wchar_t const*);
template void NVTX_API cb_sync<event_type::sync_destroy>(nvtxSyncUser_t);
template void NVTX_API cb_sync<event_type::sync_acquire_start>(nvtxSyncUser_t);
template void NVTX_API cb_sync<event_type::sync_acquire_failed>(nvtxSyncUser_t);
template void NVTX_API cb_sync<event_type::sync_acquire_success>(nvtxSyncUser_t);
template void NVTX_API cb_sync<event_type::sync_releasing>(nvtxSyncUser_t);

}  // namespace nvtxpp::recording::detail
#pragma GCC visibility pop
