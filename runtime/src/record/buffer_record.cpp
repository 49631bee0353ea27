// buffer_record.cpp - the record's entries that name buffers.
#include "record/buffer_record.h"

#include <cstring>
#include <vector>

#include "base/dtypes.h"

namespace hj {

void BufferRecord::alloc(uint32_t stream, const RecordedBuffer &b, const char *name, uint64_t grew) {
  if (!record_.on()) return;
  if (grew) record_.add(HJ_REC_MEMSET, stream, nullptr, "arena").entry.bytes = grew;
  record_.add(HJ_REC_ALLOC, stream, &b, name);
}

void BufferRecord::fill(uint32_t stream, const RecordedBuffer &b, const char *name) {
  if (record_.on()) record_.add(HJ_REC_FILL, stream, &b, name);
}

void BufferRecord::free(uint32_t stream, const RecordedBuffer &b, const char *name) {
  if (record_.on()) record_.add(HJ_REC_FREE, stream, &b, name);
}

void BufferRecord::memset(uint32_t stream, const RecordedBuffer &b, const char *name) {
  if (record_.on()) record_.add(HJ_REC_MEMSET, stream, &b, name);
}

void BufferRecord::use(uint32_t stream, const RecordedBuffer &b, const char *name) {
  if (record_.on()) record_.add(HJ_REC_USE, stream, &b, name);
}

void BufferRecord::collective(uint32_t stream, const RecordedBuffer *b, uint32_t kind, uint64_t bytes, uint32_t dtype,
                              uint32_t op, int32_t peer) {
  if (!record_.on()) return;
  RecordedCall &c = record_.add(HJ_REC_COLLECTIVE, stream, b, "");
  c.entry.index = kind;
  c.entry.bytes = bytes;
  c.entry.flags = op;
  c.entry.dtype = dtype;
  c.entry.kernel = static_cast<uint32_t>(peer);
}

void BufferRecord::matmul(uint32_t stream, const MatmulCall &m, const FindBuffer &find) {
  if (!record_.on()) return;
  RecordedCall call;
  call.entry.kind = HJ_REC_MATMUL;
  call.entry.stream = stream;
  call.name = "matmul";
  call.entry.dims[0] = m.batch;
  call.entry.dims[1] = m.m;
  call.entry.dims[2] = m.n;
  call.entry.dims[3] = m.k;
  call.entry.flags = m.flags;
  call.entry.dtype = m.aType | m.cType << 8;
  call.entry.bytes = m.workspaceBytes;
  for (const void *p : {m.a, m.b, static_cast<const void *>(m.c), m.bias, static_cast<const void *>(m.workspace)}) {
    hj_record_arg a{HJ_PARAM_PTR, 0, 0, 0, nullptr};
    a.value = reinterpret_cast<uintptr_t>(p);
    uint64_t id = 0;
    if (p && find(p, &id, &a.offset)) {
      a.is_buffer = 1;
      a.value = id;
    }
    call.args.push_back(a);
  }
  for (double v : {m.alpha, m.beta}) {  // args 5 and 6: alpha and beta, by their bits
    hj_record_arg a{HJ_PARAM_F64, 0, 0, 0, nullptr};
    std::memcpy(&a.value, &v, 8);
    call.args.push_back(a);
  }
  record_.add(std::move(call));
}

void BufferRecord::launch(uint32_t stream, const LaunchedKernel &k, const int64_t *dims, void *const *params,
                          const FindBuffer &find) {
  if (!record_.on()) return;
  // Built aside and appended whole, so running out of memory half-way
  // leaves no half-made entry in the record.
  RecordedCall c;
  c.entry.kind = k.custom ? HJ_REC_CUSTOM_CALL : HJ_REC_LAUNCH;
  c.entry.stream = stream;
  c.name = k.name;
  c.entry.kernel = k.index;
  if (dims) std::memcpy(c.entry.dims, dims, sizeof c.entry.dims);
  c.entry.launch_flags = k.launchFlags;
  c.entry.cluster[0] = k.cluster.x;
  c.entry.cluster[1] = k.cluster.y;
  c.entry.cluster[2] = k.cluster.z;
  std::vector<size_t> dimsAt;  // each tensor struct's dims in c.dims, in argument order
  const std::vector<int32_t> &kinds = *k.params;
  for (size_t i = 0; i < kinds.size(); ++i) {
    int32_t kind = kinds[i];
    bool tensor = (kind & 0xff) == HJ_PARAM_TENSOR;
    hj_record_arg a{kind, 0, 0, 0, nullptr};
    std::memcpy(&a.value, params[i], tensor ? sizeof(void *) : paramBytes(kind));
    if (tensor) {
      const auto *d = reinterpret_cast<const int64_t *>(static_cast<const char *>(params[i]) + sizeof(void *));
      dimsAt.push_back(c.dims.size());
      c.dims.insert(c.dims.end(), d, d + 2 * hj_param_rank(kind));
    }
    uint64_t id = 0;
    if ((kind == HJ_PARAM_PTR || tensor) && find(*static_cast<void *const *>(params[i]), &id, &a.offset)) {
      a.is_buffer = 1;
      a.value = id;
    }
    c.args.push_back(a);
  }
  size_t t = 0;
  for (hj_record_arg &a : c.args)  // the heap block moves with the vector: pointers once all are in
    if ((a.kind & 0xff) == HJ_PARAM_TENSOR) a.dims = c.dims.data() + dimsAt[t++];
  record_.add(std::move(c));
}

}  // namespace hj
