// host_data.cpp - random non-zero inputs and reading outputs back.
#include "hostjit/exec/host_data.h"

#include <cstring>
#include <random>

#include "hostjit/half.h"

namespace hostjit {

InputSet::~InputSet() {
  if (rt_)
    for (void *b : buffers_) hj_buffer_free(rt_->context(), b);
}

namespace {

void fillRandom(DType t, unsigned char *out, size_t n, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> mag(0.25f, 1.25f);
  std::uniform_int_distribution<int> ints(1, 100), sign(0, 1);
  for (size_t i = 0; i < n; ++i) {
    float f = mag(rng) * (sign(rng) ? 1.0f : -1.0f);
    int64_t k = ints(rng);
    unsigned char *p = out + i * dtypeBytes(t);
    switch (t) {
      case DType::f16: { uint16_t h = hj_f32_to_f16(f); std::memcpy(p, &h, 2); break; }
      case DType::bf16: { uint16_t h = hj_f32_to_bf16(f); std::memcpy(p, &h, 2); break; }
      case DType::f32: std::memcpy(p, &f, 4); break;
      case DType::f64: { double d = f; std::memcpy(p, &d, 8); break; }
      case DType::Bool: *p = 1; break;
      default: std::memcpy(p, &k, dtypeBytes(t)); break;  // little-endian: the low bytes of k
    }
  }
}

}  // namespace

double elementAsDouble(DType t, const unsigned char *b, size_t i) {
  const unsigned char *p = b + i * dtypeBytes(t);
  switch (t) {
    case DType::f16: { uint16_t h; std::memcpy(&h, p, 2); return hj_f16_to_f32(h); }
    case DType::bf16: { uint16_t h; std::memcpy(&h, p, 2); return hj_bf16_to_f32(h); }
    case DType::f32: { float f; std::memcpy(&f, p, 4); return f; }
    case DType::f64: { double d; std::memcpy(&d, p, 8); return d; }
    case DType::i8: return static_cast<int8_t>(*p);
    case DType::i16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::i64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::u8: case DType::Bool: return *p;
    case DType::u32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::u64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
  }
  return 0;
}

bool parseShapeSpec(const std::string &spec, DType *dtype, std::vector<int64_t> *dims, std::string *error) {
  size_t lb = spec.find('[');
  if (lb == std::string::npos || spec.back() != ']') {
    *error = "expected a shape like f32[1024,256], got '" + spec + "'";
    return false;
  }
  auto d = parseDType(spec.substr(0, lb));
  if (!d) {
    *error = "unknown dtype '" + spec.substr(0, lb) + "'";
    return false;
  }
  *dtype = *d;
  dims->clear();
  std::string inner = spec.substr(lb + 1, spec.size() - lb - 2);
  size_t start = 0;
  while (!inner.empty() && start <= inner.size()) {
    size_t end = inner.find(',', start);
    std::string tok = inner.substr(start, end == std::string::npos ? std::string::npos : end - start);
    char *e = nullptr;
    long long v = std::strtoll(tok.c_str(), &e, 10);
    if (tok.empty() || *e || v < 0) {
      *error = "bad dim '" + tok + "' in '" + spec + "' (expected an integer >= 0)";
      return false;
    }
    dims->push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return true;
}

Expected<void> InputSet::restoreWritten(const Plan &plan) const {
  for (size_t i = 0; i < plan.inputs.size() && i < buffers_.size(); ++i)
    if (plan.inputs[i].written && !host_[i].empty())
      if (int32_t st = hj_copy_from_host(rt_->context(), buffers_[i], host_[i].data(), host_[i].size()))
        return runtimeError(st);
  return {};
}

Expected<InputSet> InputSet::fromHost(const std::shared_ptr<Runtime> &rt, const Plan &plan,
                                      const std::vector<std::vector<int64_t>> &shapes,
                                      const std::vector<std::vector<unsigned char>> &data) {
  InputSet s;
  s.rt_ = rt;
  DLDevice dev = rt->device();
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const PlanInput &in = plan.inputs[i];
    uint64_t bytes = 0;
    if (!denseBytes(shapes[i], dtypeBytes(in.dtype), uint64_t{1} << 40, &bytes))
      return Error{HJ_ERR_INVALID_ARGUMENT, "input %" + in.name + ": the shape is too large (over 1 TiB)"};
    if (data[i].size() != bytes)
      return Error{HJ_ERR_INVALID_ARGUMENT, "input %" + in.name + ": " + std::to_string(data[i].size()) +
                                                " bytes of data for " + std::to_string(bytes) + " bytes of shape"};
    void *buf = nullptr;
    if (int32_t st = hj_buffer_alloc(rt->context(), bytes ? bytes : 1, &buf)) return runtimeError(st);
    s.buffers_.push_back(buf);
    if (bytes)
      if (int32_t st = hj_copy_from_host(rt->context(), buf, data[i].data(), bytes)) return runtimeError(st);
    auto shape = std::make_unique<int64_t[]>(std::max<size_t>(shapes[i].size(), 1));
    for (size_t d = 0; d < shapes[i].size(); ++d) shape[d] = shapes[i][d];
    auto t = std::make_unique<DLTensor>();
    t->data = buf;
    t->device = dev;
    t->ndim = static_cast<int32_t>(shapes[i].size());
    t->dtype = DLDataType{dlpackCode(in.dtype), dlpackBits(in.dtype), 1};
    t->shape = shape.get();
    t->strides = nullptr;
    t->byte_offset = 0;
    s.ptrs_.push_back(t.get());
    s.tensors_.push_back(std::move(t));
    s.shapes_.push_back(std::move(shape));
    s.host_.push_back(data[i]);
  }
  if (int32_t st = hj_synchronize(rt->context())) return runtimeError(st);
  return s;
}

Expected<InputSet> InputSet::random(const std::shared_ptr<Runtime> &rt, const Plan &plan,
                                    const std::map<std::string, std::vector<int64_t>> &shapes, uint64_t seed,
                                    const std::map<std::string, std::vector<unsigned char>> &given) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::vector<unsigned char>> data;
  for (const PlanInput &in : plan.inputs) {
    std::vector<int64_t> shape;
    if (auto it = shapes.find(in.name); it != shapes.end()) {
      shape = it->second;
      if (shape.size() != in.dims.size())
        return Error{HJ_ERR_INVALID_ARGUMENT, "input %" + in.name + ": shape has rank " + std::to_string(shape.size()) +
                                                  ", the program declares " + toString(TensorType{in.dtype, in.dims})};
      for (size_t d = 0; d < shape.size(); ++d)
        if (in.dims[d] != kDynamic && in.dims[d] != shape[d])
          return Error{HJ_ERR_INVALID_ARGUMENT, "input %" + in.name + ": dim " + std::to_string(d) + " is " +
                                                    std::to_string(shape[d]) + ", the program declares " +
                                                    toString(TensorType{in.dtype, in.dims})};
    } else {
      for (int64_t d : in.dims) {
        if (d == kDynamic)
          return Error{HJ_ERR_INVALID_ARGUMENT, "input %" + in.name + " has dynamic dims (" +
                                                    toString(TensorType{in.dtype, in.dims}) + "): give its shape, e.g. --input " +
                                                    in.name + "=" + dtypeName(in.dtype) + "[...]"};
        shape.push_back(d);
      }
    }
    uint64_t total = 0;
    if (!denseBytes(shape, dtypeBytes(in.dtype), uint64_t{1} << 36, &total))
      return Error{HJ_ERR_INVALID_ARGUMENT, "input %" + in.name + ": the shape is too large to generate (over 64 GiB)"};
    std::vector<unsigned char> bytes(total);
    fillRandom(in.dtype, bytes.data(), total / dtypeBytes(in.dtype), rng);
    if (auto g = given.find(in.name); g != given.end()) {
      if (g->second.size() != total)
        return Error{HJ_ERR_INVALID_ARGUMENT, "input %" + in.name + ": " + std::to_string(g->second.size()) +
                                                  " bytes of data for " + std::to_string(total) + " bytes of shape"};
      bytes = g->second;
    }
    dims.push_back(std::move(shape));
    data.push_back(std::move(bytes));
  }
  return fromHost(rt, plan, dims, data);
}

}  // namespace hostjit
