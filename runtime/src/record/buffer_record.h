// buffer_record.h - the call record's entries that name buffers, in the
// record's own words: an allocation and its zeroing or NaN fill (and the
// growth of the zeroed arena it took), a free, a use on another stream, a
// launch or custom call with its arguments, a library call with its
// operands, a collective. Buffers (memory/) says when, and which buffer an
// address is in; this writes the entries. Each call does nothing while the
// record is off.
#pragma once

#include <cstdint>
#include <functional>

#include "base/call_path.h"
#include "record/call_record.h"

namespace hj {

// The buffer an address is in, for an argument's entry: its id and the
// address's offset in it; false when it is in none.
using FindBuffer = std::function<bool(const void *address, uint64_t *id, uint64_t *offset)>;

// What a launch's entry says of its kernel.
struct LaunchedKernel {
  const char *name = "";
  uint32_t index = 0;                  // in its table
  const std::vector<int32_t> *params;  // hj_param_kind of each parameter
  uint32_t launchFlags = 0;
  hj_dim3 cluster{0, 0, 0};
  bool custom = false;  // a custom call (no dims)
};

class BufferRecord {
 public:
  explicit BufferRecord(CallRecord &record) : record_(record) {}
  bool on() const { return record_.on(); }

  // An allocation on `stream`: the zeroed arena's growth first (`grew`
  // bytes zeroed, 0 when none), then the buffer. Its zeroing or NaN fill
  // follows once made (memset, fill).
  void alloc(uint32_t stream, const RecordedBuffer &b, const char *name, uint64_t grew);
  void memset(uint32_t stream, const RecordedBuffer &b, const char *name);
  void fill(uint32_t stream, const RecordedBuffer &b, const char *name);
  void free(uint32_t stream, const RecordedBuffer &b, const char *name);
  void use(uint32_t stream, const RecordedBuffer &b, const char *name);
  // A launch (dims: grid, block, shared memory; NULL for a custom call)
  // with its parameters, each ptr or tensor one named by buffer where
  // `find` knows it.
  void launch(uint32_t stream, const LaunchedKernel &k, const int64_t *dims, void *const *params,
              const FindBuffer &find);
  void matmul(uint32_t stream, const MatmulCall &m, const FindBuffer &find);
  // A collective naming the buffer it writes or reads (b; NULL when none
  // of the context's).
  void collective(uint32_t stream, const RecordedBuffer *b, uint32_t kind, uint64_t bytes, uint32_t dtype,
                  uint32_t op, int32_t peer);

 private:
  CallRecord &record_;
};

}  // namespace hj
