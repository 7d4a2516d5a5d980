// The recorder core's NVTX extension modules: payload (schemas, enums, payload-carrying events,
// nvtxDomainIsEnabled) and counters (registration locks; samples do not).

#include "core_internal.hpp"

#include <cstddef>
#include <cstring>

namespace nvtxpp::recording {

using namespace detail;

namespace {

// Registered counters, found without a lock: an open-addressing table of pointers, filled under
// the names lock, each slot written once (release) and read with acquire.
constexpr std::size_t counter_slots = 4096;
std::atomic<counter_rec const*> g_counter_slots[counter_slots];

std::size_t counter_hash(std::uint32_t domain, std::uint64_t id) noexcept {
  return static_cast<std::size_t>(((id ^ (std::uint64_t{domain} << 40U)) * 0x9E3779B97F4A7C15ULL) >>
                                  52U);  // 12 bits: counter_slots
}

counter_rec const* find_counter(std::uint32_t domain, std::uint64_t id) noexcept {
  std::size_t h = counter_hash(domain, id);
  for (std::size_t i = 0; i < counter_slots; ++i, h = (h + 1) % counter_slots) {
    counter_rec const* c = g_counter_slots[h].load(std::memory_order_acquire);
    if (c == nullptr) {
      return nullptr;
    }
    if (c->id == id && c->domain == domain) {
      return c;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Extension: payload module (schemas, enums, payload-carrying events, nvtxDomainIsEnabled).

std::uint8_t NVTX_API cb_domain_is_enabled(nvtxDomainHandle_t d) {
  if (domain_off(d)) {
    return 0;  // filtered out: formatting front ends may skip their work
  }
  if (on()) {
    return 1;
  }
  // Outside a capture window nothing is recorded, unless the event may open it (a trigger).
  return g_gated.load(std::memory_order_relaxed) && g_trigger_armed.load(std::memory_order_acquire)
             ? std::uint8_t{1}
             : std::uint8_t{0};
}

std::string copy_text(char const* s) {
  return s == nullptr ? std::string{} : std::string{s, ::strnlen(s, testing::max_message_bytes)};
}

/// A static id when `wanted` lies in NVTX's static range, else the next dynamic one.
std::uint64_t pick_id(std::uint64_t wanted, std::uint64_t static_start, std::uint64_t& next) {
  if (wanted >= static_start && wanted < (std::uint64_t{1} << 32U)) {
    return wanted;
  }
  return next++;
}

/// Stores a schema or enum (under the lock) and tells the front end.
void define_schema_locked(name_state& s, schema_def def) {
  resolve_layout(def, s.tables);
  auto& slot = s.tables.schemas[{def.domain, def.id}];
  slot = std::move(def);
  if (g_hooks.schema_defined != nullptr) {
    g_hooks.schema_defined(slot);
  }
}

std::uint64_t NVTX_API cb_schema_register(nvtxDomainHandle_t d, nvtxPayloadSchemaAttr_t const* a) {
  if (a == nullptr || a->entries == nullptr || a->numEntries == 0) {
    return 0;  // NVTX: no schema (entries are mandatory)
  }
  try {
    schema_def def;
    def.domain = domain_index(d);
    std::uint64_t const mask = a->fieldMask;
    if (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) {
      def.name = copy_text(a->name);
    }
    def.type =
        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE) ? a->type : NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    def.flags = (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS) ? a->flags : 0;
    def.static_size =
        (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) ? a->payloadStaticSize : 0;
    def.pack_align = (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ALIGNMENT) ? a->packAlign : 0;
    std::size_t const n = a->numEntries < max_schema_entries ? a->numEntries : max_schema_entries;
    for (std::size_t i = 0; i < n; ++i) {
      nvtxPayloadSchemaEntry_t const& e = a->entries[i];
      def.entries.push_back({e.flags, e.type, copy_text(e.name), copy_text(e.description),
                             e.arrayOrUnionDetail, e.offset});
    }
    auto& s = state();
    std::lock_guard lock{s.mutex};
    def.id = pick_id((mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) ? a->schemaId : 0,
                     NVTX_PAYLOAD_SCHEMA_ID_STATIC_START, s.next_schema);
    std::uint64_t const id = def.id;
    define_schema_locked(s, std::move(def));
    return id;
  } catch (...) {
    return 0;
  }
}

std::uint64_t NVTX_API cb_enum_register(nvtxDomainHandle_t d, nvtxPayloadEnumAttr_t const* a) {
  if (a == nullptr || a->entries == nullptr || a->numEntries == 0) {
    return 0;
  }
  try {
    schema_def def;
    def.domain = domain_index(d);
    def.is_enum = true;
    std::uint64_t const mask = a->fieldMask;
    if (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME) {
      def.name = copy_text(a->name);
    }
    def.static_size = (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) ? a->sizeOfEnum : 4;
    std::size_t const n = a->numEntries < max_schema_entries ? a->numEntries : max_schema_entries;
    for (std::size_t i = 0; i < n; ++i) {
      def.values.push_back(
          {copy_text(a->entries[i].name), a->entries[i].value, a->entries[i].isFlag != 0});
    }
    auto& s = state();
    std::lock_guard lock{s.mutex};
    def.id = pick_id((mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID) ? a->schemaId : 0,
                     NVTX_PAYLOAD_SCHEMA_ID_STATIC_START, s.next_schema);
    std::uint64_t const id = def.id;
    define_schema_locked(s, std::move(def));
    return id;
  } catch (...) {
    return 0;
  }
}

// The nvtx*Payload calls: the event with its payloads and no message (hot: no lock).
void NVTX_API cb_mark_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p, std::size_t n) {
  if (on() && !domain_off(d)) {
    fields f;
    attach_items(f, p, n);
    mark_impl(domain_index(d), f, message_src{});
  }
}
int NVTX_API cb_push_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p, std::size_t n) {
  if (domain_off(d)) {
    return 0;
  }
  fields f;
  attach_items(f, p, n);
  return on() ? push_impl(domain_index(d), f, message_src{})
              : gated_push(domain_index(d), &f, message_src{});
}
int NVTX_API cb_pop_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p, std::size_t n) {
  if (domain_off(d)) {
    return 0;
  }
  fields f;
  attach_items(f, p, n);
  if (!on()) {
    return gated_pop_event(domain_index(d), &f);
  }
  thread_state* t = self();
  if (NVTXPP_UNLIKELY(t == nullptr)) {
    return -1;
  }
  std::uint32_t const domain = domain_index(d);
  bool close = false;
  if (NVTXPP_UNLIKELY(t->gated_n != 0)) {
    gated_pop const g = classify_pop(*t, domain);
    if (g == gated_pop::drop) {
      return -1;
    }
    close = g == gated_pop::record_and_close;
  }
  write_record(t, event_type::pop, domain, f, message_src{});
  if (close) {
    close_after_trigger();
  }
  int& depth = t->depth[domain % depth_slots];
  return depth > 0 ? --depth : -1;
}
nvtxRangeId_t NVTX_API cb_start_payload(nvtxDomainHandle_t d, nvtxPayloadData_t const* p,
                                        std::size_t n) {
  if (domain_off(d)) {
    return 0;
  }
  fields f;
  attach_items(f, p, n);
  return on() ? start_impl(domain_index(d), f, message_src{})
              : gated_start(domain_index(d), f, message_src{});
}
void NVTX_API cb_end_payload(nvtxDomainHandle_t d, nvtxRangeId_t id, nvtxPayloadData_t const* p,
                             std::size_t n) {
  if (domain_off(d)) {
    return;
  }
  if (!on()) {
    fields f;
    attach_items(f, p, n);
    gated_end(domain_index(d), id, &f);
    return;
  }
  if (id == 0 && g_gating.load(std::memory_order_relaxed)) {
    return;  // begun outside the capture window
  }
  if (thread_state* t = self()) {
    fields f;
    f.flags = flag::has_id;
    f.id = id;
    attach_items(f, p, n);
    write_record(t, event_type::end, domain_index(d), f, message_src{});
  }
}

// ---------------------------------------------------------------------------------------------
// Extension: counters module. Registration locks; samples do not.

std::uint64_t NVTX_API cb_counter_register(nvtxDomainHandle_t d, nvtxCounterAttr_t const* a) {
  if (a == nullptr || a->structSize < offsetof(nvtxCounterAttr_t, semantics)) {
    return NVTX_COUNTER_ID_NONE;
  }
  try {
    counter_def def;
    def.domain = domain_index(d);
    def.name = a->name != nullptr ? copy_text(a->name) : std::string{"(null)"};
    def.description = copy_text(a->description);
    def.schema = a->schemaId;
    def.scope = a->scopeId;
    bool const full = a->structSize >= sizeof(nvtxCounterAttr_t);
    int depth = 0;
    for (nvtxSemanticsHeader_t const* h = full ? a->semantics : nullptr; h != nullptr && depth < 16;
         h = h->next, ++depth) {
      if (h->semanticId == NVTX_SEMANTIC_ID_COUNTERS_V1 &&
          h->structSize >= sizeof(nvtxSemanticsCounter_t)) {
        auto const* c = reinterpret_cast<nvtxSemanticsCounter_t const*>(h);
        def.unit = copy_text(c->unit);
        def.semantic_flags = c->flags;
        def.limit_type = c->limitType;
        std::memcpy(&def.limit_min, &c->min, 8);
        std::memcpy(&def.limit_max, &c->max, 8);
      }
    }
    auto& s = state();
    std::lock_guard lock{s.mutex};
    def.id = pick_id(full ? a->counterId : 0, NVTX_COUNTER_ID_STATIC_START, s.next_counter);
    std::uint32_t element = predefined_layout(def.schema).size;
    if (element == 0) {
      if (schema_def const* sd = s.tables.schema_at(def.domain, def.schema)) {
        element =
            sd->static_size <= max_blob_bytes ? static_cast<std::uint32_t>(sd->static_size) : 0U;
      }
    }
    if (find_counter(def.domain, def.id) == nullptr) {
      counter_rec const* rec =
          &s.counter_recs.emplace_back(counter_rec{def.domain, def.id, element});
      std::size_t h = counter_hash(def.domain, def.id);
      for (std::size_t i = 0; i < counter_slots; ++i, h = (h + 1) % counter_slots) {
        if (g_counter_slots[h].load(std::memory_order_relaxed) == nullptr) {
          g_counter_slots[h].store(rec, std::memory_order_release);
          break;
        }
      }
    }
    auto& slot = s.tables.counters[{def.domain, def.id}];
    slot = std::move(def);
    if (g_hooks.counter_defined != nullptr) {
      g_hooks.counter_defined(slot);
    }
    return slot.id;
  } catch (...) {
    return NVTX_COUNTER_ID_NONE;
  }
}

inline void counter_record(nvtxDomainHandle_t d, std::uint64_t id, counter_sample_kind kind,
                           fields& f) noexcept {
  if (domain_off(d)) {
    return;
  }
  if (thread_state* t = self()) {
    f.flags |= flag::has_id | flag::has_category;
    f.id = id;
    f.category = static_cast<std::uint32_t>(kind);
    write_record(t, event_type::counter_sample, domain_index(d), f, message_src{});
  }
}

void NVTX_API cb_counter_int64(nvtxDomainHandle_t d, std::uint64_t id, std::int64_t v) {
  if (on()) {
    fields f;
    f.payload_type = NVTX_PAYLOAD_TYPE_INT64;
    std::memcpy(&f.payload, &v, 8);
    counter_record(d, id, counter_sample_kind::int64, f);
  }
}
void NVTX_API cb_counter_float64(nvtxDomainHandle_t d, std::uint64_t id, double v) {
  if (on()) {
    fields f;
    f.payload_type = NVTX_PAYLOAD_TYPE_DOUBLE;
    std::memcpy(&f.payload, &v, 8);
    counter_record(d, id, counter_sample_kind::float64, f);
  }
}
void NVTX_API cb_counter_sample(nvtxDomainHandle_t d, std::uint64_t id, void const* v,
                                std::size_t n) {
  if (on()) {
    fields f;
    if (v != nullptr && n > 0) {
      f.flags = flag::has_blob;
      f.bytes = v;
      f.byte_count = n < max_blob_bytes ? static_cast<std::uint32_t>(n) : max_blob_bytes;
    }
    counter_record(d, id, counter_sample_kind::bytes, f);
  }
}
void NVTX_API cb_counter_no_value(nvtxDomainHandle_t d, std::uint64_t id, std::uint8_t reason) {
  if (on()) {
    fields f;
    counter_record(d, id,
                   static_cast<counter_sample_kind>(
                       static_cast<std::uint32_t>(counter_sample_kind::no_value) + reason),
                   f);
  }
}
void NVTX_API cb_counter_batch(nvtxDomainHandle_t d, nvtxCounterBatch_t const* b) {
  if (!on() || b == nullptr || b->counters == nullptr || b->countersSize == 0) {
    return;
  }
  // One record per sample, all stamped now (tool-provided time; timestamps the caller passes
  // are in a time domain we do not convert).
  counter_rec const* c = find_counter(domain_index(d), b->counterId);
  std::size_t const element =
      c != nullptr && c->element_size != 0 && b->countersSize % c->element_size == 0
          ? c->element_size
          : b->countersSize;  // unknown layout: one undecodable record
  auto const* p = static_cast<unsigned char const*>(b->counters);
  for (std::size_t at = 0; at < b->countersSize; at += element) {
    fields f;
    f.flags = flag::has_blob;
    f.bytes = p + at;
    f.byte_count = element < max_blob_bytes ? static_cast<std::uint32_t>(element) : max_blob_bytes;
    counter_record(d, b->counterId, counter_sample_kind::batch, f);
  }
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Public (internal) interface: the extension modules' slots.

int attach_extension(void* module_info) noexcept {
  auto* info = static_cast<nvtxExtModuleInfo_t*>(module_info);
  if (info == nullptr || info->segmentsCount == 0 || info->segments == nullptr) {
    return 1;
  }
  nvtxExtModuleSegment_t& seg = info->segments[0];
  auto slot = [&seg](std::size_t id, auto fn) {
    if (seg.functionSlots != nullptr && id < seg.slotCount) {
      seg.functionSlots[id] = reinterpret_cast<intptr_t>(fn);
    }
  };
  if (info->moduleId == NVTX_EXT_PAYLOAD_MODULEID) {
    slot(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, &cb_schema_register);
    slot(NVTX3EXT_CBID_nvtxPayloadEnumRegister, &cb_enum_register);
    slot(NVTX3EXT_CBID_nvtxMarkPayload, &cb_mark_payload);
    slot(NVTX3EXT_CBID_nvtxRangePushPayload, &cb_push_payload);
    slot(NVTX3EXT_CBID_nvtxRangePopPayload, &cb_pop_payload);
    slot(NVTX3EXT_CBID_nvtxRangeStartPayload, &cb_start_payload);
    slot(NVTX3EXT_CBID_nvtxRangeEndPayload, &cb_end_payload);
    slot(NVTX3EXT_CBID_nvtxDomainIsEnabled, &cb_domain_is_enabled);
  } else if (info->moduleId == NVTX_EXT_COUNTERS_MODULEID) {
    slot(NVTX3EXT_CBID_nvtxCounterRegister, &cb_counter_register);
    slot(NVTX3EXT_CBID_nvtxCounterSampleInt64, &cb_counter_int64);
    slot(NVTX3EXT_CBID_nvtxCounterSampleFloat64, &cb_counter_float64);
    slot(NVTX3EXT_CBID_nvtxCounterSample, &cb_counter_sample);
    slot(NVTX3EXT_CBID_nvtxCounterSampleNoValue, &cb_counter_no_value);
    slot(NVTX3EXT_CBID_nvtxCounterBatchSubmit, &cb_counter_batch);
  } else if (info->moduleId == NVTX_EXT_MODULEID_MEM) {
    attach_memory(&seg);
  }
  return 1;
}

}  // namespace nvtxpp::recording