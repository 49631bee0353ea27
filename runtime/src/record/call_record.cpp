// call_record.cpp - the call record's entries and their text form.
#include "record/call_record.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/dtypes.h"
#include "base/error.h"
#include "comm/comm.h"

namespace hj {

void CallRecord::enable(bool on) {
  on_ = on;
  if (on_) calls_.clear();
}

RecordedCall &CallRecord::add(int32_t kind, uint32_t stream, const RecordedBuffer *b, const char *name) {
  RecordedCall &c = calls_.emplace_back();
  c.entry.kind = kind;
  c.entry.stream = stream;
  if (b) {
    c.entry.buffer = b->id;
    c.entry.bytes = b->bytes;
    c.entry.flags = b->flags;
    c.entry.dtype = b->dtype;
  }
  c.name = name ? name : "";
  return c;
}

void CallRecord::add(RecordedCall &&call) { calls_.push_back(std::move(call)); }

int32_t CallRecord::get(uint64_t index, hj_record_entry *out) const {
  if (index >= calls_.size())
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_record_get: index %llu out of range", static_cast<unsigned long long>(index));
  const RecordedCall &c = calls_[index];
  *out = c.entry;
  out->name = c.name.c_str();
  out->num_args = static_cast<uint32_t>(c.args.size());
  out->args = c.args.data();
  return HJ_OK;
}

namespace {

// A launch's or a custom call's arguments, separated by commas.
void appendArgs(const RecordedCall &c, std::string &s) {
  char tmp[256];
  for (size_t i = 0; i < c.args.size(); ++i) {
    const hj_record_arg &a = c.args[i];
    if (i) s += ", ";
    if (a.is_buffer) {
      std::snprintf(tmp, sizeof tmp, a.offset ? "#%llu+%llu" : "#%llu", (unsigned long long)a.value,
                    (unsigned long long)a.offset);
    } else if ((a.kind & 0xff) == HJ_PARAM_TENSOR) {
      std::snprintf(tmp, sizeof tmp, "ptr 0x%llx", (unsigned long long)a.value);
    } else {
      switch (a.kind) {
        case HJ_PARAM_PTR: std::snprintf(tmp, sizeof tmp, "ptr 0x%llx", (unsigned long long)a.value); break;
        case HJ_PARAM_I32: std::snprintf(tmp, sizeof tmp, "i32 %d", int32_t(uint32_t(a.value))); break;
        case HJ_PARAM_I64: std::snprintf(tmp, sizeof tmp, "i64 %lld", (long long)a.value); break;
        case HJ_PARAM_F32: {
          float f;
          uint32_t bits = uint32_t(a.value);
          std::memcpy(&f, &bits, 4);
          std::snprintf(tmp, sizeof tmp, "f32 %.9g [0x%08x]", f, bits);
          break;
        }
        case HJ_PARAM_F64: {
          double f;
          std::memcpy(&f, &a.value, 8);
          std::snprintf(tmp, sizeof tmp, "f64 %.17g [0x%016llx]", f, (unsigned long long)a.value);
          break;
        }
        default: std::snprintf(tmp, sizeof tmp, "bool %d", int(a.value & 1)); break;
      }
    }
    s += tmp;
    if ((a.kind & 0xff) == HJ_PARAM_TENSOR) {
      uint32_t rank = hj_param_rank(a.kind);
      s += " sizes[";
      for (uint32_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(a.dims[d]);
      s += "] strides[";
      for (uint32_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(a.dims[rank + d]);
      s += "]";
    }
  }
}

}  // namespace

int64_t CallRecord::format(uint64_t index, char *buf, uint64_t cap) const {
  if (index >= calls_.size()) return -1;
  const RecordedCall &c = calls_[index];
  const hj_record_entry &e = c.entry;
  std::string s;
  char tmp[256];
  switch (e.kind) {
    case HJ_REC_ALLOC:
      std::snprintf(tmp, sizeof tmp, "alloc #%llu %%%s %s bytes=%llu%s%s%s", (unsigned long long)e.buffer,
                    c.name.c_str(), dtypeName(e.dtype), (unsigned long long)e.bytes,
                    (e.flags & HJ_ALLOC_ZERO_INIT) ? " zero_init" : "",
                    (e.flags & HJ_ALLOC_RESETS_TO_ZERO) ? " resets_to_zero" : "",
                    (e.flags & HJ_ALLOC_OUTPUT) ? " output" : "");
      s = tmp;
      break;
    case HJ_REC_FREE:
      std::snprintf(tmp, sizeof tmp, "free #%llu %%%s", (unsigned long long)e.buffer, c.name.c_str());
      s = tmp;
      break;
    case HJ_REC_MEMSET:
    case HJ_REC_FILL:
      std::snprintf(tmp, sizeof tmp, "%s #%llu %%%s bytes=%llu", e.kind == HJ_REC_MEMSET ? "memset" : "fill",
                    (unsigned long long)e.buffer, c.name.c_str(), (unsigned long long)e.bytes);
      s = tmp;
      break;
    case HJ_REC_STREAM:
      std::snprintf(tmp, sizeof tmp, "stream %u", e.index);
      s = tmp;
      break;
    case HJ_REC_EVENT_RECORD:
    case HJ_REC_EVENT_WAIT:
      std::snprintf(tmp, sizeof tmp, "%s event %u", e.kind == HJ_REC_EVENT_RECORD ? "record" : "wait", e.index);
      s = tmp;
      break;
    case HJ_REC_SYNC: s = "sync"; break;
    case HJ_REC_COLLECTIVE:
      std::snprintf(tmp, sizeof tmp, "%s%s%s %s bytes=%llu", collectiveName(e.index),
                    e.index == HJ_COLL_ALL_REDUCE || e.index == HJ_COLL_REDUCE_SCATTER ? " " : "",
                    e.index == HJ_COLL_ALL_REDUCE || e.index == HJ_COLL_REDUCE_SCATTER ? reduceOpName(e.flags) : "",
                    dtypeName(e.dtype), (unsigned long long)e.bytes);
      s = tmp;
      if (e.index >= HJ_COLL_BROADCAST) s += (e.index == HJ_COLL_BROADCAST ? " root " : " peer ") + std::to_string(e.kernel);
      break;
    case HJ_REC_MATMUL: {
      auto operand = [&](size_t i) {
        const hj_record_arg &a = c.args[i];
        if (a.is_buffer) return "#" + std::to_string(a.value) + (a.offset ? "+" + std::to_string(a.offset) : "");
        std::snprintf(tmp, sizeof tmp, "ptr 0x%llx", (unsigned long long)a.value);
        return std::string(tmp);
      };
      std::snprintf(tmp, sizeof tmp, "matmul batch=%" PRId64 " m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " %s->%s",
                    e.dims[0], e.dims[1], e.dims[2], e.dims[3], dtypeName(e.dtype & 0xff), dtypeName(e.dtype >> 8));
      s = tmp;
      if (e.flags & HJ_MM_TRANSPOSE_A) s += " transpose_a";
      if (e.flags & HJ_MM_TRANSPOSE_B) s += " transpose_b";
      s += " (" + operand(0) + ", " + operand(1) + ") -> " + operand(2);
      if (e.flags & HJ_MM_BIAS) s += " bias " + operand(3);
      if (e.bytes) s += " workspace " + operand(4) + " bytes=" + std::to_string(e.bytes);
      for (size_t i = 5; i < 7 && i < c.args.size(); ++i) {
        double v;
        std::memcpy(&v, &c.args[i].value, 8);
        if (v == (i == 5 ? 1.0 : 0.0)) continue;
        std::snprintf(tmp, sizeof tmp, " %s=%.17g", i == 5 ? "alpha" : "beta", v);
        s += tmp;
      }
      break;
    }
    case HJ_REC_USE:
      std::snprintf(tmp, sizeof tmp, "use #%llu %%%s", (unsigned long long)e.buffer, c.name.c_str());
      s = tmp;
      break;
    case HJ_REC_CUSTOM_CALL:
    case HJ_REC_LAUNCH: {
      if (e.kind == HJ_REC_CUSTOM_CALL) {
        s = "call @" + c.name + " (";
        appendArgs(c, s);
        s += ")";
        break;
      }
      std::snprintf(tmp, sizeof tmp,
                    "launch @%s grid(%" PRId64 ", %" PRId64 ", %" PRId64 ") block(%" PRId64 ", %" PRId64 ", %" PRId64
                    ") smem(%" PRId64 ")",
                    c.name.c_str(), e.dims[0], e.dims[1], e.dims[2], e.dims[3], e.dims[4], e.dims[5], e.dims[6]);
      s = tmp;
      if (e.cluster[0]) {
        std::snprintf(tmp, sizeof tmp, " cluster(%u, %u, %u)", e.cluster[0], e.cluster[1], e.cluster[2]);
        s += tmp;
      }
      if (e.launch_flags & HJ_LAUNCH_COOPERATIVE) s += " cooperative";
      if (e.launch_flags & HJ_LAUNCH_PDL) s += " pdl";
      s += " (";
      appendArgs(c, s);
      s += ")";
      break;
    }
  }
  if (e.stream != 0 && e.kind != HJ_REC_STREAM) s += " on stream " + std::to_string(e.stream);
  if (buf && cap) {
    size_t n = std::min<size_t>(s.size(), cap - 1);
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return static_cast<int64_t>(s.size());
}

}  // namespace hj
