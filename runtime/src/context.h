// context.h - the state behind an hj_context and an hj_kernel_table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "graph.h"
#include "memory.h"
#include "ptr_map.h"

namespace hj {

// One recorded runtime call (see hj_record_entry).
struct RecordedCall {
  hj_record_entry entry{};
  std::string name;
  std::vector<hj_record_arg> args;
  std::vector<int64_t> dims;  // tensor-struct sizes and strides, args[i].dims point here
};

// A freed buffer that work on other streams still uses: it returns to its
// stream's cache or arena once `events` (one per such stream) are complete.
struct DeferredFree {
  Block *block = nullptr;
  std::vector<void *> events;
};

// The streams and events a context's programs use (streams.cpp).
struct StreamState {
  static constexpr uint32_t kMaxStreams = HJ_MAX_STREAMS;  // Block::usedOn is a bit mask
  static_assert(kMaxStreams <= 64);
  static constexpr uint32_t kMaxEvents = HJ_MAX_EVENTS;
  std::vector<void *> events;      // program event i, NULL until first recorded
  std::vector<void *> spareEvents;  // backend events free for deferred frees
  std::vector<DeferredFree> deferred;
};

}  // namespace hj

// Member order is destruction order in reverse: the backend outlives the
// memory objects that return blocks to it.
struct hj_context {
  explicit hj_context(std::unique_ptr<hj::Backend> b, const hj_options &o, bool reuse, bool check, bool nan);
  ~hj_context();

  // kLive while the context exists; the destructor overwrites it, so an
  // entry point given a destroyed context (or any other pointer) can say so
  // while the memory has not been reused for another context.
  static constexpr uint64_t kLive = 0x686a2d6374782d31ull;  // "hj-ctx-1"
  uint64_t magic = kLive;

  std::unique_ptr<hj::Backend> backend;
  hj_options options;
  bool reuseZeroed, checkZeroed, fillNan, recording;
  bool sync;  // synchronise after every launch and memset (hj_options.sync)
  hj_stats stats{};
  hj::FaultInjector injector{stats};
  hj::DeviceMemory memory;
  hj::Pool pool;
  hj::Arenas arenas;
  hj::StreamState streams;
  std::unique_ptr<hj::Comm> comm;  // SPMD: this context's rank (hj_comm_init)
  hj::PtrMap<hj::Block> live;
  uint64_t nextBufferId = 1;
  std::vector<hj::RecordedCall> record;
  // Declared last so it goes first: its graphs and blocks return to the
  // backend and memory above.
  hj::GraphCache graphs{*this};
};

struct hj_kernel_table {
  hj_backend_kind backend;
  int32_t device;
  std::vector<hj::KernelEntry> kernels;
  std::shared_ptr<void> keepAlive;
};
