// The buffers nvtxpp-capture hands to CUPTI, and the records written from them
// (cupti_internal.hpp).
//
// A small pool of 4 MiB buffers (16 at most: beyond, CUPTI drops records and counts them); each
// completed buffer's records are converted (cupti_convert.cpp) and appended to the capture file
// in whole-record writes. Buffers CUPTI holds are noted, so a detach gives them back to the pool.
#include "cupti_internal.hpp"

#include "../inject_internal.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace nvtxpp::capture::cupti {

namespace detail {

namespace rec = nvtxpp::recording;

// Buffers ---------------------------------------------------------------------------------------

/// Notes `b` as held by CUPTI (nullptr: none), or as returned (`lend` false).
void note_lent(unsigned char* b, bool lend) noexcept {
  for (auto& slot : g_lent) {
    unsigned char* expected = lend ? nullptr : b;
    if (slot.compare_exchange_strong(expected, lend ? b : nullptr, std::memory_order_acq_rel)) {
      return;
    }
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  for (auto& slot : g_free) {
    if (unsigned char* b = slot.exchange(nullptr, std::memory_order_acq_rel)) {
      note_lent(b, true);
      *buffer = b;
      *size = buffer_bytes;
      return;
    }
  }
  if (g_allocated.fetch_add(1, std::memory_order_relaxed) < max_buffers) {
    if (void* b = std::aligned_alloc(8, buffer_bytes)) {
      note_lent(static_cast<unsigned char*>(b), true);
      *buffer = static_cast<uint8_t*>(b);
      *size = buffer_bytes;
      return;
    }
  }
  g_allocated.fetch_sub(1, std::memory_order_relaxed);
  // Every buffer is waiting to be written: CUPTI drops records and counts them.
  *buffer = nullptr;
  *size = 0;
}

void release_buffer(unsigned char* b) noexcept {
  for (auto& slot : g_free) {
    unsigned char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, b, std::memory_order_acq_rel)) {
      return;
    }
  }
  std::free(b);  // cannot happen (max_buffers slots), but never leak
  g_allocated.fetch_sub(1, std::memory_order_relaxed);
}

void append_record(std::vector<unsigned char>& batch, std::uint32_t kind, void const* body,
                   std::size_t size, void const* tail = nullptr, std::size_t tail_size = 0) {
  std::uint32_t const head[2] = {kind, static_cast<std::uint32_t>(size + tail_size)};
  auto const* h = reinterpret_cast<unsigned char const*>(head);
  batch.insert(batch.end(), h, h + sizeof head);
  batch.insert(batch.end(), static_cast<unsigned char const*>(body),
               static_cast<unsigned char const*>(body) + size);
  if (tail_size != 0) {
    batch.insert(batch.end(), static_cast<unsigned char const*>(tail),
                 static_cast<unsigned char const*>(tail) + tail_size);
  }
}

/// Writes the batch as it is: whole records, in one write each time (O_APPEND).
void write_batch(std::vector<unsigned char>& batch) noexcept {
  if (!batch.empty()) {
    write_file_bytes(batch.data(), batch.size());
    batch.clear();
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (!same_process()) {
    return;  // a forked child: the parent's buffers are not ours to write (or free)
  }
  {
    std::lock_guard<std::mutex> lock{g_mutex};
    std::vector<unsigned char>& batch = *g_batch;
    converter& conv = *g_converter;
    gpu_out out;
    CUpti_Activity* record = nullptr;
    std::uint64_t lost = 0;
    while (g_api.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
      try {
        if (!conv.convert(record, out)) {
          continue;
        }
        for (std::uint32_t id : conv.new_strings()) {
          std::string const& text = conv.text_of(id);
          append_record(batch, static_cast<std::uint32_t>(rec::gpu_record::string), &id, sizeof id,
                        text.data(), text.size());
        }
        conv.clear_new_strings();
        if (out.kind == rec::gpu_record::info) {
          append_record(batch, static_cast<std::uint32_t>(out.kind), out.text.data(),
                        out.text.size());
        } else if (out.graph_node != 0) {  // graph work: the node it ran as
          rec::gpu_graph_tail const tail{out.graph_node, out.graph, 0};
          append_record(batch, static_cast<std::uint32_t>(out.kind), out.body, out.size, &tail,
                        sizeof tail);
        } else {
          append_record(batch, static_cast<std::uint32_t>(out.kind), out.body, out.size);
        }
      } catch (std::bad_alloc const&) {
        ++lost;  // out of memory: this record is lost, and counted
        conv.clear_new_strings();
      }
      if (batch.size() >= (std::size_t{256} << 10)) {
        write_batch(batch);
      }
    }
    write_batch(batch);
    g_dropped.fetch_add(lost, std::memory_order_relaxed);
    collect_dropped();  // written once, at the end (final_flush)
  }
  note_lent(buffer, false);
  release_buffer(buffer);
}

/// After a detach: CUPTI has let go of every buffer; one it still held (an empty one it had
/// asked for) goes back to the pool rather than being lost to it.
void reclaim_lent_buffers() noexcept {
  for (auto& slot : g_lent) {
    if (unsigned char* b = slot.exchange(nullptr, std::memory_order_acq_rel)) {
      release_buffer(b);
    }
  }
}

}  // namespace detail

}  // namespace nvtxpp::capture::cupti
