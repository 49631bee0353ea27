// test_runtime.cpp - the allocation contract, points 1 to 8, through the C
// API and through programs run by the evaluator and the JIT.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

void *alloc1d(hj_context *ctx, int64_t n, uint32_t dtype, uint32_t flags, const char *name = "b") {
  void *p = nullptr;
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, dtype, flags, name, &p) == HJ_OK);
  return p;
}

std::string programPath(const char *rel) { return std::string(HOSTJIT_SOURCE_DIR) + "/" + rel; }

// Runs a program `calls` times through the evaluator or the JIT; returns the runtime.
std::shared_ptr<Runtime> runProgram(const std::string &file, const ParityArgs &args, bool jit, int calls,
                                    hj_options o, std::string *error = nullptr) {
  auto rt = makeRuntime(o);
  Diagnostics d;
  Program p = parseFile(file, d);
  REQUIRE(d.empty());
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto inputs = InputSet::random(rt, *plan, args.shapes, 7);
  REQUIRE(inputs);
  auto scalars = scalarArgs(*plan, args.scalars);
  Runner runner(p, rt, jit);
  for (int i = 0; i < calls; ++i) {
    auto out = runner.run(inputs->span(), scalars);
    if (!out) {
      if (error) *error = out.error().message;
      break;
    }
  }
  return rt;
}

}  // namespace

TEST_CASE("point 1: plain buffers are cached by size and reused", "[runtime]") {
  auto rt = Runtime::create(testOptions());
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  void *a = alloc1d(ctx, 1000, HJ_DTYPE_f32, 0);
  REQUIRE(hj_free(ctx, a) == HJ_OK);
  void *b = alloc1d(ctx, 1001, HJ_DTYPE_f32, 0);  // same rounded size
  CHECK(b == a);
  hj_stats s = (*rt)->stats();
  CHECK(s.backend_allocs == 1);
  CHECK(s.pool_hits == 1);
  CHECK(s.live_bytes == 4004);
  REQUIRE(hj_free(ctx, b) == HJ_OK);
  CHECK((*rt)->stats().live_bytes == 0);
}

TEST_CASE("point 1: sizes that only grow do not keep every size they passed cached", "[runtime]") {
  // A decode loop's output, one row longer each step, freed after the next
  // is made: the cache holds a few sizes, not one per step.
  auto rt = Runtime::create(testOptions());
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  const size_t row = 300 << 10;  // elements of f32: 1.2 MB per row
  void *held = nullptr;
  uint64_t most = 0;
  for (size_t rows = 1; rows <= 40; ++rows) {
    void *next = alloc1d(ctx, int64_t(rows * row), HJ_DTYPE_f32, 0);
    REQUIRE(next);
    if (held) REQUIRE(hj_free(ctx, held) == HJ_OK);
    held = next;
    most = std::max(most, (*rt)->stats().reserved_bytes);
  }
  REQUIRE(hj_free(ctx, held) == HJ_OK);
  const uint64_t largest = 40 * row * 4;
  // Every size kept would be 820 rows' worth; the trim keeps it to a few.
  CHECK(most <= 4 * largest);
  CHECK((*rt)->stats().backend_frees > 20);
  void *small = alloc1d(ctx, 1000, HJ_DTYPE_f32, 0);  // below 64 KiB: cached as before
  REQUIRE(hj_free(ctx, small) == HJ_OK);
  CHECK(alloc1d(ctx, 1000, HJ_DTYPE_f32, 0) == small);
  REQUIRE(hj_free(ctx, small) == HJ_OK);
}

TEST_CASE("point 1: out of memory releases cached blocks, retries once, then fails clearly", "[runtime]") {
  auto rt = Runtime::create(testOptions(8192));
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  void *a = alloc1d(ctx, 1024, HJ_DTYPE_f32, 0);  // 4096 bytes
  REQUIRE(hj_free(ctx, a) == HJ_OK);               // cached
  void *b = alloc1d(ctx, 1536, HJ_DTYPE_f32, 0);  // 6144: fits only once the cache is released
  CHECK((*rt)->stats().reserved_bytes == 6144);
  void *c = nullptr;
  int64_t n = 1024;
  CHECK(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "big", &c) == HJ_ERR_OUT_OF_MEMORY);
  CHECK(std::string(hj_last_error()) ==
        "buffer %big: out of device memory: 4096 more bytes would exceed the limit of 8192 bytes (6144 held)");
  REQUIRE(hj_free(ctx, b) == HJ_OK);
  CHECK((*rt)->stats().live_bytes == 0);
}

TEST_CASE("point 2: zero_init memory reads as zero when the first kernel starts, every call", "[runtime]") {
  // count_and_reset copies sem[0] (as found) to %seen, then counts and resets;
  // copy_f32 copies a zero_init buffer into the output. HOSTJIT_FILL_NAN is on,
  // so a buffer that was not zeroed would show the NaN pattern.
  Program p = parseOk(R"(kernel @count_and_reset(ptr<i32>, ptr<i32>) {
  host = "count_and_reset"
}
kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}
func @main() -> (i32[1], f32[8]) {
  %sem = alloc i32[1] zero_init resets_to_zero
  %seen = alloc i32[1]
  launch @count_and_reset grid(1, 1, 1) block(1, 1, 1) smem(0) (%sem, %seen)
  %z = alloc f32[8] zero_init
  %y = alloc f32[8]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%z, %y, 8)
  free %z
  free %sem
  return %seen, %y
}
)");
  hj_options o = testOptions();
  o.fill_nan = 1;
  for (bool jit : {false, true}) {
    auto rt = makeRuntime(o);
    Runner runner(p, rt, jit);
    for (int call = 0; call < 10; ++call) {
      auto out = runner.run();
      REQUIRE(out);
      auto seen = (*out)[0].toHost();
      auto y = (*out)[1].toHost();
      REQUIRE(seen);
      REQUIRE(y);
      CHECK(std::all_of(seen->begin(), seen->end(), [](unsigned char c) { return c == 0; }));
      CHECK(std::all_of(y->begin(), y->end(), [](unsigned char c) { return c == 0; }));
    }
    CHECK(rt->stats().memsets == 1 + 10);  // the arena once, %z every call
  }
}

TEST_CASE("points 2 and 3: resets_to_zero buffers cause one memset over 100 calls", "[runtime]") {
  for (bool jit : {false, true}) {
    auto rt = runProgram(programPath("examples/grid_sum.hir"), {{{"x", {100, 37}}}, {}}, jit, 100, testOptions());
    hj_stats s = rt->stats();
    INFO((jit ? "jit" : "eval"));
    CHECK(s.launches == 100);
    CHECK(s.memsets == 1);  // the arena's first growth
    CHECK(s.arena_growths == 1);
    CHECK(s.live_bytes == 0);
  }
}

TEST_CASE("point 4: zero_init alone causes one memset per call", "[runtime]") {
  for (bool jit : {false, true}) {
    auto rt = runProgram(programPath("examples/pipeline.hir"), {{{"x", {5, 300}}}, {{"alpha", "0.5"}}}, jit, 100,
                         testOptions());
    hj_stats s = rt->stats();
    CHECK(s.memsets == 100);
    CHECK(s.arena_growths == 0);
    CHECK(s.live_bytes == 0);
  }
}

TEST_CASE("point 5: reuse_zeroed_memory treats zero_init as resets_to_zero", "[runtime]") {
  hj_options o = testOptions();
  o.reuse_zeroed_memory = 1;
  auto rt = Runtime::create(o);
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  for (int i = 0; i < 10; ++i) REQUIRE(hj_free(ctx, alloc1d(ctx, 64, HJ_DTYPE_i32, HJ_ALLOC_ZERO_INIT)) == HJ_OK);
  CHECK((*rt)->stats().memsets == 1);
  CHECK((*rt)->stats().arena_growths == 1);
}

TEST_CASE("point 5: outputs never come from the arena, even with reuse_zeroed_memory", "[runtime]") {
  // Program a returns a zero_init output that its kernel fills; program b
  // then takes a zero_init semaphore. Were the output taken from the arena,
  // b's semaphore would land on a's results and start non-zero.
  Program a = parseOk(R"(kernel @strided_fill(ptr<f32>, i64, i64, i64, i64) {
  host = "strided_fill"
}
func @main() -> (f32[64]) {
  %y = alloc f32[64] zero_init
  launch @strided_fill grid(1, 1, 1) block(1, 1, 1) smem(0) (%y, 1, 64, 64, 1)
  return %y
}
)");
  Program b = parseOk(R"(kernel @count_and_reset(ptr<i32>, ptr<i32>) {
  host = "count_and_reset"
}
func @main() -> (i32[1]) {
  %sem = alloc i32[64] zero_init
  %seen = alloc i32[1]
  launch @count_and_reset grid(1, 1, 1) block(1, 1, 1) smem(0) (%sem, %seen)
  free %sem
  return %seen
}
)");
  hj_options o = testOptions();
  o.reuse_zeroed_memory = 1;
  auto rt = makeRuntime(o);
  auto ea = Evaluator::create(a, rt);
  auto eb = Evaluator::create(b, rt);
  REQUIRE(ea);
  REQUIRE(eb);
  for (int call = 0; call < 3; ++call) {
    REQUIRE(ea->run({}));  // the output is dropped at once
    auto out = eb->run({});
    REQUIRE(out);
    auto seen = (*out)[0].toHost();
    REQUIRE(seen);
    CHECK(std::all_of(seen->begin(), seen->end(), [](unsigned char c) { return c == 0; }));
  }
  int32_t zero = 0;
  REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
  CHECK(zero == 1);
}

TEST_CASE("point 3: the arena reuses a region and grows once when it is too small", "[runtime]") {
  auto rt = Runtime::create(testOptions());
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  uint32_t z = HJ_ALLOC_ZERO_INIT | HJ_ALLOC_RESETS_TO_ZERO;
  void *a = alloc1d(ctx, 1000, HJ_DTYPE_f32, z);
  void *b = alloc1d(ctx, 400000, HJ_DTYPE_f32, z);  // 1.6 MB: does not fit the first 1 MiB region
  CHECK((*rt)->stats().arena_growths == 2);
  REQUIRE(hj_free(ctx, a) == HJ_OK);  // the old region goes when its last buffer does
  REQUIRE(hj_free(ctx, b) == HJ_OK);
  hj_stats s = (*rt)->stats();
  CHECK(s.arena_bytes >= 1600000);
  void *c = alloc1d(ctx, 1000, HJ_DTYPE_f32, z);
  void *d = alloc1d(ctx, 400000, HJ_DTYPE_f32, z);
  CHECK((*rt)->stats().arena_growths == 2);  // both fit now: no memset
  CHECK((*rt)->stats().memsets == 2);
  REQUIRE(hj_free(ctx, c) == HJ_OK);
  REQUIRE(hj_free(ctx, d) == HJ_OK);
}

TEST_CASE("point 6: HOSTJIT_CHECK_ZEROED names the buffer and the kernel that left it non-zero", "[runtime]") {
  const char *text = R"(kernel @leaves_nonzero(ptr<i32>) {
  host = "leaves_nonzero"
}
func @main() -> () {
  %sem = alloc i32[4] zero_init resets_to_zero
  launch @leaves_nonzero grid(1, 1, 1) block(1, 1, 1) smem(0) (%sem)
  free %sem
  return
}
)";
  Program p = parseOk(text);
  for (bool jit : {false, true}) {
    hj_options o = testOptions();
    o.check_zeroed = 1;
    auto rt = makeRuntime(o);
    Runner runner(p, rt, jit);
    auto out = runner.run();
    REQUIRE(!out);
    CHECK(out.error().status == HJ_ERR_NOT_ZEROED);
    CHECK(out.error().message ==
          "HOSTJIT_CHECK_ZEROED: buffer %sem (i32, 16 bytes, zero_init resets_to_zero) was not zero when freed: byte "
          "0 is 0x07; the last kernel given it was @leaves_nonzero, which must leave it zero");
    int32_t zero = 0;
    REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
    CHECK(zero == 1);  // repaired: later buffers still start at zero
    CHECK(rt->stats().live_bytes == 0);
  }
}

TEST_CASE("point 6: HOSTJIT_FILL_NAN fills plain buffers with a pattern per dtype", "[runtime]") {
  hj_options o = testOptions();
  o.fill_nan = 1;
  auto rt = Runtime::create(o);
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  struct Case {
    uint32_t dtype;
    uint64_t pattern;
  } cases[] = {{HJ_DTYPE_f16, 0x7E00},          {HJ_DTYPE_bf16, 0x7FC0},
               {HJ_DTYPE_f32, 0x7FC00000},      {HJ_DTYPE_f64, 0x7FF8000000000000ull},
               {HJ_DTYPE_i8, 0x7F},             {HJ_DTYPE_i16, 0x7FFF},
               {HJ_DTYPE_i32, 0x7FFFFFFF},      {HJ_DTYPE_i64, 0x7FFFFFFFFFFFFFFFull},
               {HJ_DTYPE_u8, 0xFF},             {HJ_DTYPE_u32, 0xFFFFFFFF},
               {HJ_DTYPE_u64, ~0ull},           {HJ_DTYPE_bool, 1}};
  for (const Case &c : cases) {
    uint32_t size = hj_dtype_size(c.dtype);
    void *p = alloc1d(ctx, 3, c.dtype, 0);
    unsigned char host[24];
    REQUIRE(hj_copy_to_host(ctx, host, p, 3 * size) == HJ_OK);
    for (int i = 0; i < 3; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, host + i * size, size);
      CHECK(v == c.pattern);
    }
    REQUIRE(hj_free(ctx, p) == HJ_OK);
  }
  CHECK((*rt)->stats().fills == 12);
  // zero_init buffers are zeroed, not filled.
  void *z = alloc1d(ctx, 3, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT);
  float host[3] = {1, 1, 1};
  REQUIRE(hj_copy_to_host(ctx, host, z, sizeof host) == HJ_OK);
  CHECK((host[0] == 0 && host[1] == 0 && host[2] == 0));
  REQUIRE(hj_free(ctx, z) == HJ_OK);
}

TEST_CASE("point 6: a kernel reading an uninitialised buffer sees NaN under HOSTJIT_FILL_NAN", "[runtime]") {
  Program p = parseOk(R"(kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}
func @main() -> (f32[4]) {
  %scratch = alloc f32[4]
  %y = alloc f32[4]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%scratch, %y, 4)
  free %scratch
  return %y
}
)");
  hj_options o = testOptions();
  o.fill_nan = 1;
  auto rt = makeRuntime(o);
  auto ev = Evaluator::create(p, rt);
  REQUIRE(ev);
  auto out = ev->run({});
  REQUIRE(out);
  auto host = (*out)[0].toHost();
  REQUIRE(host);
  float v[4];
  std::memcpy(v, host->data(), 16);
  for (float f : v) CHECK(std::isnan(f));
}

TEST_CASE("point 7: an expanded dim allocates the unexpanded size", "[runtime]") {
  auto rt = Runtime::create(testOptions());
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  hj_record_enable(ctx, 1);
  int64_t sizes[2] = {5, 1000}, strides[2] = {1, 0};
  void *p = nullptr;
  REQUIRE(hj_alloc(ctx, sizes, strides, 2, HJ_DTYPE_f32, 0, "e", &p) == HJ_OK);
  CHECK((*rt)->stats().live_bytes == 20);
  REQUIRE(hj_free(ctx, p) == HJ_OK);
  CHECK((*rt)->recordLines() == std::vector<std::string>{"alloc #1 %e f32 bytes=20", "free #1 %e"});
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// Reading a destroyed context is what this checks; AddressSanitizer and
// ThreadSanitizer report the same mistake themselves, as a use after free.
TEST_CASE("a destroyed context is refused while its memory is not reused", "[runtime]") {
  hj_options o = testOptions();
  hj_context *ctx = nullptr;
  REQUIRE(hj_context_create(&o, &ctx) == HJ_OK);
  hj_context_destroy(ctx);
  int64_t n = 4;
  void *p = nullptr;
  CHECK(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "late", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK_THAT(hj_last_error(), Catch::Contains("is not a live hostjit context (destroyed"));
}
#endif

TEST_CASE("runtime errors name what was wrong", "[runtime]") {
  auto rt = Runtime::create(testOptions());
  REQUIRE(rt);
  hj_context *ctx = (*rt)->context();
  int dummy;
  CHECK(hj_free(ctx, &dummy) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()).find("is not a live buffer of this context") != std::string::npos);
  int64_t neg = -3;
  void *p = nullptr;
  CHECK(hj_alloc(ctx, &neg, nullptr, 1, HJ_DTYPE_f32, 0, "w", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "buffer %w: extent 0 is -3, expected a size >= 0");
  int64_t sizes2[2] = {4, 3}, strides2[2] = {3, -1};
  CHECK(hj_alloc(ctx, sizes2, strides2, 2, HJ_DTYPE_f32, 0, "w", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "buffer %w: stride 1 is -1, expected >= 0");
  CHECK(hj_alloc(ctx, sizes2, nullptr, 2, HJ_DTYPE_f32, HJ_ALLOC_RESETS_TO_ZERO, "w", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) ==
        "buffer %w: resets_to_zero without zero_init: a buffer the kernel resets must start zeroed");
  hj_kernel_desc desc{};
  desc.name = "k";
  desc.host_symbol = "no_such_kernel";
  hj_kernel_table *t = nullptr;
  CHECK(hj_kernel_table_create(ctx, &desc, 1, &t) == HJ_ERR_NOT_FOUND);
  CHECK(std::string(hj_last_error()).find("host kernel 'no_such_kernel' is not registered") != std::string::npos);
  desc.host_symbol = "noop";
  REQUIRE(hj_register_host_kernel(ctx, "noop", [](const hj_dim3 *, const hj_dim3 *, uint32_t, void **) {}) == HJ_OK);
  REQUIRE(hj_kernel_table_create(ctx, &desc, 1, &t) == HJ_OK);
  int64_t dims[7] = {0, 1, 1, 1, 1, 1, 0};
  CHECK(hj_launch(ctx, t, 0, dims, nullptr, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) ==
        "launch of @k grid(0, 1, 1) block(1, 1, 1): grid.x is 0, expected 1 to 2147483647");
  // NULL where the C API needs a pointer, a rank over 8, missing arguments.
  dims[0] = 1;
  CHECK(hj_launch(ctx, t, 0, nullptr, nullptr, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "launch of @k: dims is NULL");
  CHECK(hj_launch(nullptr, t, 0, dims, nullptr, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_launch: ctx is NULL");
  CHECK(hj_launch(ctx, t, 3, dims, nullptr, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_launch: kernel index 3 is not in the kernel table");
  hj_kernel_table_destroy(t);
  int32_t kinds[2] = {HJ_PARAM_PTR, HJ_PARAM_I64};
  desc.num_params = 2;
  desc.params = kinds;
  REQUIRE(hj_kernel_table_create(ctx, &desc, 1, &t) == HJ_OK);
  CHECK(hj_launch(ctx, t, 0, dims, nullptr, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "launch of @k: params is NULL, expected 2 arguments");
  void *half[2] = {&p, nullptr};
  CHECK(hj_launch(ctx, t, 0, dims, half, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "launch of @k: params[1] is NULL, expected a pointer to argument 1");
  hj_kernel_table_destroy(t);
  int64_t sizes[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(hj_alloc(ctx, sizes, nullptr, 9, HJ_DTYPE_f32, 0, "r", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_alloc of %r: rank 9, expected at most 8");
  CHECK(hj_alloc(ctx, nullptr, nullptr, 2, HJ_DTYPE_f32, 0, "s", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_alloc of %s: sizes is NULL with rank 2");
  CHECK(hj_alloc(ctx, sizes, nullptr, 1, HJ_DTYPE_f32, 0, "o", nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_alloc of %o: out is NULL");
  int64_t big[2] = {int64_t{1} << 40, int64_t{1} << 40};
  CHECK(hj_alloc(ctx, big, nullptr, 2, HJ_DTYPE_f32, 0, "big", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "buffer %big: size overflows (extents too large)");
  CHECK(hj_free(nullptr, &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_free: ctx is NULL");
  // Something that is not a context.
  std::vector<uint64_t> notAContext(64, 7);
  auto *fake = reinterpret_cast<hj_context *>(notAContext.data());
  CHECK(hj_alloc(fake, sizes, nullptr, 1, HJ_DTYPE_f32, 0, "f", &p) == HJ_ERR_INVALID_ARGUMENT);
  CHECK_THAT(hj_last_error(), Catch::StartsWith("hj_alloc: ctx ") &&
                                  Catch::EndsWith("is not a live hostjit context (destroyed, or not made by "
                                                  "hj_context_create)"));
  CHECK(hj_synchronize(fake) == HJ_ERR_INVALID_ARGUMENT);
  // The entry points that did not check their context crashed on NULL.
  CHECK(hj_empty_cache(nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_empty_cache: ctx is NULL");
  hj_record_entry entry;
  CHECK(hj_record_get(nullptr, 0, &entry) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_record_get: ctx is NULL");
  int32_t zero = 0;
  CHECK(hj_arena_check_zero(nullptr, &zero) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_arena_check_zero: ctx is NULL");
  CHECK(hj_arena_check_zero(fake, &zero) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(hj_arena_check_zero(ctx, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_arena_check_zero: isZero is NULL");
  void *buffer = nullptr;
  REQUIRE(hj_buffer_alloc(ctx, 16, &buffer) == HJ_OK);
  hj_buffer_free(nullptr, buffer);  // no status to report: the buffer stays, the last error says why
  CHECK(std::string(hj_last_error()) == "hj_buffer_free: ctx is NULL");
  hj_buffer_free(ctx, buffer);
  int32_t done = 0, again = 0;
  CHECK(hj_graph_call(ctx, nullptr, 0, nullptr, 0, 1, nullptr, 0, nullptr, 0, nullptr, 0, &done) ==
        HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_graph_call: the key is empty");
  CHECK(hj_graph_reserve(ctx, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 0, &done) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_graph_reserve: the key is empty");
  uint64_t key = 1;
  CHECK(hj_graph_reserve(ctx, &key, sizeof key, nullptr, 0, nullptr, 0, nullptr, 0, nullptr) ==
        HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_graph_reserve: done is NULL");
  CHECK(hj_graph_end(ctx, HJ_OK, nullptr, nullptr, &again) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_graph_end: no graph-mode call is in progress");
  CHECK((*rt)->stats().live_bytes == 0);
  CHECK(hj_load_host_library(ctx, "/nonexistent/lib.so") == HJ_ERR_NOT_FOUND);
}

TEST_CASE("point 8: an error midway frees everything, the same way in eval and jit", "[runtime]") {
  // The pipeline's output %y does not fit a 12 KiB limit while %t and %s are live.
  std::string file = programPath("examples/pipeline.hir");
  ParityArgs args{{{"x", {8, 300}}}, {{"alpha", "2.0"}}};
  std::string errEval, errJit;
  auto rtEval = runProgram(file, args, false, 1, testOptions(12288), &errEval);
  auto rtJit = runProgram(file, args, true, 1, testOptions(12288), &errJit);
  CHECK(errEval.find("buffer %y: out of device memory") != std::string::npos);
  CHECK(errEval == errJit);
  for (auto &rt : {rtEval, rtJit}) {
    CHECK(rt->stats().live_bytes == 0);
    CHECK(rt->stats().allocs == rt->stats().frees);
    int32_t zero = 0;
    REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
    CHECK(zero == 1);
  }
}

TEST_CASE("tensor-struct parameters carry the data pointer, sizes and strides", "[runtime]") {
  Diagnostics d;
  Program p = parseFile(programPath("test/programs/tensor_struct.hir"), d);
  REQUIRE(d.empty());
  for (bool jit : {false, true}) {
    auto rt = makeRuntime();
    auto plan = makePlan(p);
    REQUIRE(plan);
    auto inputs = InputSet::random(rt, *plan, {{"x", {6, 4}}}, 9);
    REQUIRE(inputs);
    Runner runner(p, rt, jit);
    auto out = runner.run(inputs->span());
    REQUIRE(out);
    auto values = [&](size_t i) {
      auto h = (*out)[i].toHost();
      REQUIRE(h);
      std::vector<int64_t> v(6);
      std::memcpy(v.data(), h->data(), 48);
      return v;
    };
    float last;
    std::memcpy(&last, inputs->hostData(0).data() + 23 * 4, 4);
    CHECK(values(0) == std::vector<int64_t>{1, 6, 4, 4, 1, static_cast<int64_t>(1000 * last)});
    CHECK(values(1) == std::vector<int64_t>{1, 4, 6, 1, 4, 3006000});  // transposed: element (3, 5)
    CHECK(values(2) == std::vector<int64_t>{1, 6, 8, 1, 0, 5001000});  // expanded dim: stride 0
    CHECK(values(3) == std::vector<int64_t>{1, 6, 4, 4, 1, 5004000});  // contiguous strides computed
  }
}
