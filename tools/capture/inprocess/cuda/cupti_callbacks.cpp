// CUPTI's callbacks in nvtxpp-capture (cupti_internal.hpp): the one subscriber, subscribed at start
// and again after each detach, and what it follows: stream creation (stream names), graph node
// creation (graph ranges), cuProfilerStart/Stop (--capture-range=cudaProfilerApi), with the
// flight recorder the call each thread is in (every call while attached, the calls that wait
// while detached), and a CUDA call's exit when a detach is armed.
#include "cupti_internal.hpp"

#include "../capture_gate.hpp"
#include "api_calls.hpp"
#include "graph_nodes.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvtxpp::capture::cupti {

namespace detail {

/// The API functions that wait (synchronisation, blocking copies, allocation and freeing): while
/// CUPTI is detached, the flight recorder's call table follows these alone, so a hang report
/// still names the call a thread is stuck in, at no cost to the launches between them (the whole
/// API domains cost a launch-bound step 1.24-1.27x on the H100: docs/performance.md).
constexpr std::size_t max_wait_cbids = 128;
struct api_function {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
};
api_function g_wait_cbids[max_wait_cbids];
std::size_t g_wait_cbid_count = 0;

/// Whether an API function's name (CUPTI's, e.g. "cudaStreamSynchronize_v3020") waits.
bool waits(std::string_view name) noexcept {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  bool const async = name.find("Async") != std::string_view::npos;
  return name.find("Synchronize") != std::string_view::npos ||
         (!async && (starts("cudaMemcpy") || starts("cuMemcpy") || starts("cudaMalloc") ||
                     starts("cuMemAlloc") || starts("cudaFree") || starts("cuMemFree")));
}

void find_wait_cbids() noexcept {
  for (auto [domain, size] :
       {std::pair{CUPTI_CB_DOMAIN_RUNTIME_API, std::uint32_t{CUPTI_RUNTIME_TRACE_CBID_SIZE}},
        std::pair{CUPTI_CB_DOMAIN_DRIVER_API, std::uint32_t{CUPTI_DRIVER_TRACE_CBID_SIZE}}}) {
    for (CUpti_CallbackId cbid = 1; cbid < size && g_wait_cbid_count < max_wait_cbids; ++cbid) {
      char const* name = api_name(static_cast<std::uint32_t>(domain), cbid);
      if (name != nullptr && waits(name)) {
        g_wait_cbids[g_wait_cbid_count++] = {domain, cbid};
      }
    }
  }
}

/// Enables the callbacks the subscriber carries. `attached`: CUPTI's activity API is attached
/// (the flight recorder's call table follows every API call, as the whole domains), else
/// detached (the calls that wait alone). Caller holds g_window_mutex (or is starting CUPTI).
void enable_callbacks(bool attached) noexcept {
  CUpti_SubscriberHandle const sub = g_subscriber;
  if (sub == nullptr) {
    return;
  }
  if (g_api_calls.load(std::memory_order_relaxed)) {
    for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
      g_api.enable_domain(attached ? 1 : 0, sub, domain);
    }
    if (!attached) {
      for (std::size_t i = 0; i < g_wait_cbid_count; ++i) {
        g_api.enable_callback(1, sub, g_wait_cbids[i].domain, g_wait_cbids[i].cbid);
      }
    }
    api_calls::coverage_changed();  // a call entered before may never be seen to return
  }
  if (g_stream_names) {
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED);
  }
  if (g_um_deferred.load(std::memory_order_acquire)) {
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }
  if (g_graph_calls) {
    for (CUpti_CallbackId cbid : graph_nodes::callbacks) {
      g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, cbid);
    }
    for (CUpti_CallbackId cbid : graph_nodes::driver_callbacks) {
      g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    }
  }
  if (g_profiler_calls) {
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                          CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                          CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  }
}

void CUPTIAPI on_resource(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          void const* data);

/// Subscribes (again) with on_resource. @return false when CUPTI refuses (another subscriber)
bool subscribe() noexcept {
  return g_subscriber != nullptr ||
         (g_api.subscribe != nullptr &&
          g_api.subscribe(&g_subscriber, &on_resource, nullptr) == CUPTI_SUCCESS);
}

/// CUPTI's resource callback: each stream the program creates gets an info record
/// `stream=<handle>:<CUPTI stream id>`, so the trace can give a stream's GPU track the name the
/// program gave its cudaStream_t through NVTX (nvtxNameCudaStream, nvtxpp::name_cuda_stream).
void CUPTIAPI on_resource(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          void const* data) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    // Every API call when the flight recorder tracks them (whole domains are enabled), else
    // only the driver calls enabled one by one below.
    if (g_api_calls.load(std::memory_order_relaxed)) {
      api_calls::on_callback(static_cast<std::uint32_t>(domain), cbid, data);
    }
    // A period ended and CUPTI is flushed: it detaches at this call's exit.
    if (g_armed.load(std::memory_order_acquire) && data != nullptr &&
        static_cast<CUpti_CallbackData const*>(data)->callbackSite == CUPTI_API_EXIT) {
      try_detach();
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      return;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && data != nullptr &&
      (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ||
       cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
    if (!g_profiler_calls) {
      return;  // enabled with the whole domain, not asked for
    }
    // cudaProfilerStart/Stop call these. The window opens as Start returns and closes as Stop
    // is entered: the calls' own records fall outside it.
    auto const* cb = static_cast<CUpti_CallbackData const*>(data);
    bool const start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    if (cb->callbackSite == (start ? CUPTI_API_EXIT : CUPTI_API_ENTER)) {
      gate::profiler_api(start);
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && data != nullptr) {
    if (g_graph_calls) {
      for (CUpti_CallbackId wanted : graph_nodes::driver_callbacks) {
        if (cbid == wanted) {
          graph_nodes::on_driver_api(cbid, data);  // calls that add child-graph nodes
        }
      }
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || data == nullptr) {
    return;
  }
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    enable_deferred_unified_memory();
  }
  if (cbid != CUPTI_CBID_RESOURCE_STREAM_CREATED) {
    graph_nodes::on_resource(cbid, data);  // CUDA graph nodes (inprocess/cuda/graph_nodes.cpp)
    return;
  }
  auto const* r = static_cast<CUpti_ResourceData const*>(data);
  std::uint32_t id = 0;
  if (g_api.stream_id(r->context, r->resourceHandle.stream, 0, &id) != CUPTI_SUCCESS) {
    return;
  }
  char text[64];
  int const n = std::snprintf(
      text, sizeof text, "stream=0x%llx:%u",
      static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(r->resourceHandle.stream)),
      id);
  if (n > 0 && static_cast<std::size_t>(n) < sizeof text) {
    write_info(std::string_view{text, static_cast<std::size_t>(n)});
  }
}

/// With the flight recorder: every runtime and driver API call goes to api_calls, so stacks
/// reports name the call a thread is inside. Returns the `api_calls` info record's text.
std::string start_api_calls(void* lib, CUpti_SubscriberHandle subscriber) {
  if (!api_calls::start()) {
    return "api_calls=unavailable:no table (see stderr)";
  }
  std::string why;
  if (!resolve(lib, "cuptiEnableDomain", g_api.enable_domain, why)) {
    return "api_calls=unavailable:" + why;
  }
  for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    if (CUptiResult const r = g_api.enable_domain(1, subscriber, domain); r != CUPTI_SUCCESS) {
      return "api_calls=unavailable:cuptiEnableDomain: " + result_text(r);
    }
  }
  find_wait_cbids();
  g_api_calls.store(true, std::memory_order_relaxed);
  return "api_calls=on";
}

/// Subscribes to stream creation (and CUDA graph node events) when this CUPTI offers it (one
/// subscriber per process: a program that subscribes itself keeps its subscription, and tracks keep
/// CUPTI's ids).
void start_stream_names(void* lib) {
  std::string why;
  if (!resolve(lib, "cuptiSubscribe", g_api.subscribe, why) ||
      !resolve(lib, "cuptiEnableCallback", g_api.enable_callback, why)) {
    return;
  }
  g_stream_names = resolve(lib, "cuptiGetStreamIdEx", g_api.stream_id, why);
  if (subscribe()) {
    // NVTXPP_GRAPH_NODES=off: no graph node events (to measure what they cost; docs/graphs.md).
    char const* graphs = std::getenv("NVTXPP_GRAPH_NODES");
    g_graph_calls =
        (graphs == nullptr || std::strcmp(graphs, "off") != 0) && graph_nodes::start(lib);
    g_profiler_calls = std::getenv("NVTXPP_CAPTURE_RANGE") != nullptr &&
                       std::strcmp(std::getenv("NVTXPP_CAPTURE_RANGE"), "cudaProfilerApi") == 0;
    enable_callbacks(true);
    if (api_calls::wanted()) {
      write_info(start_api_calls(lib, g_subscriber));
    }
  } else if (api_calls::wanted()) {
    write_info("api_calls=unavailable:cuptiSubscribe failed (another CUPTI subscriber?)");
  }
}

}  // namespace detail

}  // namespace nvtxpp::capture::cupti
