// runtime_handles.cpp - C++ handles that own the C runtime's objects.
#include <cstdio>
#include <cstring>

#include "hostjit/exec/runtime_handles.h"
#include "hostjit/ir/files.h"

namespace hostjit {

Error runtimeError(int32_t status) { return Error{status, hj_last_error()}; }

Expected<std::shared_ptr<Runtime>> Runtime::create(const hj_options &options) {
  hj_context *ctx = nullptr;
  if (int32_t st = hj_context_create(&options, &ctx)) return runtimeError(st);
  return std::shared_ptr<Runtime>(new Runtime(ctx));
}

Expected<std::shared_ptr<Runtime>> Runtime::create() {
  hj_options o;
  hj_options_init(&o);
  return create(o);
}

Runtime::~Runtime() { hj_context_destroy(ctx_); }

hj_stats Runtime::stats() const {
  hj_stats s;
  hj_get_stats(ctx_, &s);
  return s;
}

DLDevice Runtime::device() const {
  int32_t type = 0, id = 0;
  hj_context_device(ctx_, &type, &id);
  return DLDevice{static_cast<DLDeviceType>(type), id};
}

std::vector<std::string> Runtime::recordLines() const {
  std::vector<std::string> lines;
  uint64_t n = hj_record_size(ctx_);
  for (uint64_t i = 0; i < n; ++i) {
    int64_t len = hj_record_format(ctx_, i, nullptr, 0);
    std::string s(static_cast<size_t>(len) + 1, '\0');
    hj_record_format(ctx_, i, s.data(), s.size());
    s.pop_back();
    lines.push_back(std::move(s));
  }
  return lines;
}

Expected<std::vector<hj_profile_row>> Runtime::profile() const {
  uint64_t n = 0;
  if (int32_t st = hj_profile_count(ctx_, &n)) return runtimeError(st);
  std::vector<hj_profile_row> rows(n);
  for (uint64_t i = 0; i < n; ++i)
    if (int32_t st = hj_profile_get(ctx_, i, &rows[i])) return runtimeError(st);
  return rows;
}

Expected<void> Runtime::writeTrace(const std::string &path) const {
  if (int32_t st = hj_trace_write(ctx_, path.c_str())) return runtimeError(st);
  return {};
}

Expected<std::shared_ptr<KernelTable>> KernelTable::load(const std::shared_ptr<Runtime> &rt, const Plan &plan) {
  bool cuda = hj_context_backend(rt->context()) == HJ_BACKEND_CUDA;
  std::vector<std::string> sources(plan.kernels.size());
  std::vector<std::vector<int32_t>> params(plan.kernels.size());
  std::vector<std::vector<uint32_t>> dtypes(plan.kernels.size());
  std::vector<hj_kernel_desc> descs(plan.kernels.size());
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const Kernel &k = plan.kernels[i];
    hj_kernel_desc &d = descs[i];
    for (const ParamType &t : k.params) params[i].push_back(paramKind(t));
    d.name = k.name.c_str();
    if (k.custom) {
      for (const ParamType &t : k.params) dtypes[i].push_back(static_cast<uint32_t>(t.dtype));
      d.custom_symbol = k.symbol ? k.symbol->c_str() : "";
      d.custom_library = k.library ? k.library->c_str() : nullptr;
      d.custom_flags = k.capturable ? uint32_t(HJ_CUSTOM_CAPTURABLE) : 0u;
      d.param_dtypes = dtypes[i].data();
      d.num_params = static_cast<uint32_t>(params[i].size());
      d.params = params[i].data();
      continue;
    }
    d.host_symbol = k.host ? k.host->c_str() : nullptr;
    d.num_params = static_cast<uint32_t>(params[i].size());
    d.params = params[i].data();
    d.launch_flags = (k.cooperative ? uint32_t(HJ_LAUNCH_COOPERATIVE) : 0u) | (k.pdl ? uint32_t(HJ_LAUNCH_PDL) : 0u) |
                     (k.boundsChecked ? uint32_t(HJ_LAUNCH_BOUNDS_CHECKED) : 0u);
    if (k.cluster)
      for (int c = 0; c < 3; ++c) d.cluster[c] = static_cast<uint32_t>((*k.cluster)[c]);
    if (k.block)
      for (int c = 0; c < 3; ++c) d.block[c] = static_cast<uint32_t>((*k.block)[c]);
    if (cuda && (k.cuda || k.image)) {
      const std::string &file = k.cuda ? *k.cuda : *k.image;
      auto bytes = readFileBytes(file, k.cuda ? kMaxTextFileBytes : kMaxDataFileBytes);
      if (!bytes)
        return Error{bytes.error().status, "kernel @" + k.name + ": cannot read " + (k.cuda ? "CUDA source" : "image") +
                                               " '" + file + "': " + bytes.error().message};
      sources[i] = std::move(*bytes);
      if (k.cuda) {
        d.cuda_source = sources[i].c_str();
        d.nvrtc_options = k.nvrtcOptions && !k.nvrtcOptions->empty() ? k.nvrtcOptions->c_str() : nullptr;
      } else {
        d.cuda_image = sources[i].data();
        d.cuda_image_size = sources[i].size();
      }
      d.cuda_path = file.c_str();
      d.cuda_entry = k.entry ? k.entry->c_str() : "";
    }
  }
  hj_kernel_table *t = nullptr;
  if (int32_t st = hj_kernel_table_create(rt->context(), descs.data(), static_cast<uint32_t>(descs.size()), &t))
    return runtimeError(st);
  return std::shared_ptr<KernelTable>(new KernelTable(t));
}

KernelTable::~KernelTable() { hj_kernel_table_destroy(table_); }

Tensor::Tensor(std::shared_ptr<Runtime> rt, void *data, DType dtype, uint32_t rank, const int64_t *sizes,
               const int64_t *strides)
    : rt_(std::move(rt)), data_(data), dtype_(dtype), rank_(rank) {
  HOSTJIT_INVARIANT(rank <= kMaxRank);
  for (uint32_t d = 0; d < rank; ++d) sizes_[d] = sizes[d];
  if (strides) {
    for (uint32_t d = 0; d < rank; ++d) strides_[d] = strides[d];
  } else {
    int64_t s = 1;
    for (uint32_t d = rank; d-- > 0;) {
      strides_[d] = s;
      s *= sizes_[d];
    }
  }
}

Expected<Tensor> Tensor::fromHost(const std::shared_ptr<Runtime> &rt, DType dtype, std::vector<int64_t> sizes,
                                  const void *data, size_t bytes) {
  std::string shape = toString(TensorType{dtype, sizes});
  if (sizes.size() > kMaxRank)
    return Error{HJ_ERR_INVALID_ARGUMENT, "Tensor::fromHost: " + shape + " has rank " + std::to_string(sizes.size()) +
                                              "; the limit is 8"};
  uint64_t want = dtypeBytes(dtype);
  for (int64_t s : sizes) {
    if (s < 0) return Error{HJ_ERR_INVALID_ARGUMENT, "Tensor::fromHost: " + shape + " has a negative size"};
    if (__builtin_mul_overflow(want, static_cast<uint64_t>(s), &want) || want > HJ_MAX_BUFFER_BYTES)
      return Error{HJ_ERR_INVALID_ARGUMENT, "Tensor::fromHost: " + shape + " is too large"};
  }
  if (bytes != want)
    return Error{HJ_ERR_INVALID_ARGUMENT, "Tensor::fromHost: " + std::to_string(bytes) + " bytes of data for " + shape +
                                              ", which holds " + std::to_string(want)};
  void *buf = nullptr;
  if (int32_t st = hj_buffer_alloc(rt->context(), want ? want : 1, &buf)) return runtimeError(st);
  if (want)
    if (int32_t st = hj_copy_from_host(rt->context(), buf, data, want)) {
      Error e = runtimeError(st);
      hj_buffer_free(rt->context(), buf);
      return e;
    }
  Tensor t(rt, buf, dtype, static_cast<uint32_t>(sizes.size()), sizes.data(), nullptr);
  t.pooled_ = false;
  return t;
}

Tensor::~Tensor() { reset(); }

void Tensor::reset() {
  if (data_ && rt_) {
    if (pooled_) hj_free(rt_->context(), data_);
    else hj_buffer_free(rt_->context(), data_);
  }
  data_ = nullptr;
  rt_.reset();
}

Tensor::Tensor(Tensor &&o) noexcept { *this = std::move(o); }

Tensor &Tensor::operator=(Tensor &&o) noexcept {
  if (this != &o) {
    reset();
    rt_ = std::move(o.rt_);
    data_ = o.data_;
    dtype_ = o.dtype_;
    rank_ = o.rank_;
    sizes_ = o.sizes_;
    strides_ = o.strides_;
    pooled_ = o.pooled_;
    o.data_ = nullptr;
  }
  return *this;
}

int64_t Tensor::storageElements() const {
  int64_t span = 1;
  for (uint32_t d = 0; d < rank_; ++d) {
    if (sizes_[d] == 0) return 0;
    span += (sizes_[d] - 1) * strides_[d];
  }
  return span;
}

DLTensor Tensor::dl() {
  DLTensor t{};
  t.data = data_;
  t.device = rt_->device();
  t.ndim = static_cast<int32_t>(rank_);
  t.dtype = DLDataType{dlpackCode(dtype_), dlpackBits(dtype_), 1};
  t.shape = sizes_.data();
  t.strides = strides_.data();
  return t;
}

namespace {
struct ManagedContext {
  std::shared_ptr<Runtime> rt;
  void *data;
  std::array<int64_t, kMaxRank> sizes, strides;
  bool pooled;
};
}  // namespace

DLManagedTensor *Tensor::release() {
  auto *mc = new ManagedContext{rt_, data_, sizes_, strides_, pooled_};
  auto *m = new DLManagedTensor{};
  m->dl_tensor = dl();
  m->dl_tensor.shape = mc->sizes.data();
  m->dl_tensor.strides = mc->strides.data();
  m->manager_ctx = mc;
  m->deleter = [](DLManagedTensor *self) {
    auto *c = static_cast<ManagedContext *>(self->manager_ctx);
    if (c->data && c->pooled) hj_free(c->rt->context(), c->data);
    else if (c->data) hj_buffer_free(c->rt->context(), c->data);
    delete c;
    delete self;
  };
  data_ = nullptr;
  rt_.reset();
  return m;
}

Expected<std::vector<unsigned char>> Tensor::toHost() const {
  std::vector<unsigned char> out(static_cast<size_t>(storageElements()) * dtypeBytes(dtype_));
  if (!out.empty())
    if (int32_t st = hj_copy_to_host(rt_->context(), out.data(), data_, out.size())) return runtimeError(st);
  return out;
}

size_t outputDimSlots(const Plan &plan) {
  size_t n = 0;
  for (const PlanOutput &o : plan.outputs) n += o.sizes.size() + o.strides.size();
  return n;
}

std::vector<Tensor> makeOutputs(const std::shared_ptr<Runtime> &rt, const Plan &plan, void *const *data,
                                const int64_t *dims) {
  std::vector<Tensor> out;
  out.reserve(plan.outputs.size());
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const PlanOutput &o = plan.outputs[i];
    uint32_t rank = static_cast<uint32_t>(o.sizes.size());
    out.emplace_back(rt, data[i], o.dtype, rank, dims, o.strides.empty() ? nullptr : dims + rank);
    dims += rank + o.strides.size();
  }
  return out;
}

}  // namespace hostjit
