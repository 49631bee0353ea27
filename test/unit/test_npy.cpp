// test_npy.cpp - .npy files in and out (every dtype, the shapes NumPy writes,
// the errors a user meets), and input tensors made from host data.
#include "helpers.h"

#include <filesystem>
#include <fstream>
#include <random>

#include "hostjit/exec/npy.h"

using namespace hostjit;
using namespace hostjit::test;

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("hostjit_npy_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(dir); }
  ~TempDir() { fs::remove_all(dir); }
  std::string file(const std::string &name) const { return (dir / name).string(); }
};

// A .npy file written byte by byte, as NumPy would (version 1 or 2).
void writeRaw(const std::string &path, const std::string &dict, const std::string &data, int version = 1) {
  std::string header = dict;
  size_t prefix = version == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  size_t n = header.size();
  for (size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  std::ofstream(path, std::ios::binary) << out << header << data;
}

std::vector<unsigned char> randomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (unsigned char &b : v) b = static_cast<unsigned char>(rng() | 1);  // never zero
  return v;
}

}  // namespace

TEST_CASE("npy: every dtype and rank written reads back the same", "[npy]") {
  TempDir t;
  const DType types[] = {DType::f16, DType::f32, DType::f64, DType::i8,  DType::i16, DType::i32,
                         DType::i64, DType::u8,  DType::u32, DType::u64, DType::Bool};
  const std::vector<int64_t> shapes[] = {{}, {7}, {3, 5}, {2, 3, 4}, {1, 1, 2, 1, 3, 1, 2, 2}, {4, 0}};
  uint64_t seed = 1;
  for (DType d : types)
    for (const auto &shape : shapes) {
      NpyArray a;
      a.dtype = d;
      a.shape = shape;
      size_t n = 1;
      for (int64_t s : shape) n *= static_cast<size_t>(s);
      a.data = randomBytes(n * dtypeBytes(d), seed++);
      if (d == DType::Bool)
        for (unsigned char &b : a.data) b &= 1;
      std::string path = t.file("a.npy");
      REQUIRE(writeNpy(path, a));
      // The data starts at a multiple of 64 bytes, as NumPy's writer keeps it.
      CHECK((fs::file_size(path) - a.data.size()) % 64 == 0);
      auto b = readNpy(path);
      INFO(dtypeName(d) << " rank " << shape.size());
      REQUIRE(b);
      CHECK(b->dtype == d);
      CHECK(b->shape == shape);
      CHECK(b->data == a.data);
    }
}

TEST_CASE("npy: headers as NumPy writes them, in format 1 and 2, native and no byte order", "[npy]") {
  TempDir t;
  const std::string data("\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 12);
  struct Case {
    const char *dict;
    int version;
    DType dtype;
    std::vector<int64_t> shape;
  } cases[] = {
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 1, DType::i32, {3}},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 2, DType::i32, {3}},
      {"{'descr': '=i4', 'fortran_order': False, 'shape': (1, 3), }", 1, DType::i32, {1, 3}},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': (12,), }", 1, DType::u8, {12}},
      {"{'shape': (2, 6), 'fortran_order': False, 'descr': '|i1'}", 1, DType::i8, {2, 6}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 1, DType::f32, {}},
  };
  for (const Case &c : cases) {
    INFO(c.dict);
    writeRaw(t.file("h.npy"), c.dict, data, c.version);
    auto a = readNpy(t.file("h.npy"));
    REQUIRE(a);
    CHECK(a->dtype == c.dtype);
    CHECK(a->shape == c.shape);
  }
}

TEST_CASE("npy: a file hostjit cannot take says which file and why", "[npy]") {
  TempDir t;
  std::string f = t.file("bad.npy");
  struct Case {
    const char *dict;
    std::string data;
    const char *message;
  } cases[] = {
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\1'),
       "a big-endian array (dtype '>f4'); hostjit reads little-endian data"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\1'),
       "a Fortran-order array; save it in C order (numpy.ascontiguousarray)"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\1'),
       "dtype '<c8' has no hostjit element type"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", std::string(60, '\1'),
       "the data is cut short: 60 bytes for a shape (4, 4) of 64 bytes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", std::string(4, '\1'),
       "an array of 9 dims; hostjit tensors have at most 8"},
      {"{'descr': '<f4', 'shape': (2,), }", std::string(8, '\1'), "the .npy header is not a dictionary"},
  };
  for (const Case &c : cases) {
    writeRaw(f, c.dict, c.data);
    auto a = readNpy(f);
    INFO(c.dict);
    REQUIRE(!a);
    CHECK_THAT(a.error().message, Catch::StartsWith(f + ": ") && Catch::Contains(c.message));
  }
  std::ofstream(f, std::ios::binary) << "hello, not numpy";
  CHECK_THAT(readNpy(f).error().message, Catch::Contains("not a NumPy .npy file"));
  CHECK_THAT(readNpy(t.file("missing.npy")).error().message, Catch::Contains("missing.npy: cannot read the file"));
  NpyArray bf;
  bf.dtype = DType::bf16;
  bf.shape = {1};
  bf.data = {1, 2};
  CHECK_THAT(writeNpy(f, bf).error().message, Catch::Contains("bf16 has no NumPy dtype"));
  NpyArray ok;
  ok.shape = {1};
  ok.data = {1, 2, 3, 4};
  CHECK_THAT(writeNpy(t.file("no/such/dir/x.npy"), ok).error().message, Catch::Contains("cannot write the file"));
}

TEST_CASE("npy: the header is read as the Python literal numpy.load reads", "[npy]") {
  TempDir t;
  std::string f = t.file("h.npy");
  const std::string data(64, '\1');
  // What numpy.load accepts, read as it reads it: a key given twice keeps
  // its last value, quotes of either kind, spaces and newlines anywhere.
  struct Good {
    const char *dict;
    DType dtype;
    std::vector<int64_t> shape;
  } good[] = {
      {"{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", DType::i32, {2}},
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3,)}", DType::f32, {2, 3}},
      {"{ 'shape' : ( 2 , 3 ) ,\n 'fortran_order' : False , 'descr' : '<f4' , }", DType::f32, {2, 3}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (4,)}", DType::f32, {4}},
  };
  for (const Good &g : good) {
    INFO(g.dict);
    writeRaw(f, g.dict, data);
    auto a = readNpy(f);
    INFO((a ? "" : a.error().message));
    REQUIRE(a);
    CHECK(a->dtype == g.dtype);
    CHECK(a->shape == g.shape);
  }
  // What numpy.load refuses (ValueError from literal_eval or from its key
  // and type checks), hostjit refuses too, saying why.
  struct Bad {
    const char *dict, *why;
  } bad[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'note': \"'shape': (9,)\"}",
       "an unexpected key 'note'"},
      {"{'descr': \"'shape': (9,)\", 'fortran_order': False}", "a key is missing"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "'fortran_order' is not True or False"},
      {"{'descr': '<f4', 'fortran_order': 'False', 'shape': (2,)}", "'fortran_order' is not True or False"},
      {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,)}", "'fortran_order' is not True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "'shape' is not a tuple of sizes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "'shape' is not a tuple of sizes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "'shape' is not a tuple of sizes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}", "'shape' is not a tuple of sizes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "'shape' is not a tuple of sizes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}", "'shape' is not a tuple of sizes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", "'shape' is not a tuple of sizes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}", "'shape' is not a tuple of sizes"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (2,)}", "'descr' is not a string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "text after the dictionary's '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "no ',' or '}' after 'shape'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "no ',' or '}' after 'descr'"},
      {"('descr', '<f4')", "it does not start with '{'"},
      {"{descr: '<f4', 'fortran_order': False, 'shape': (2,)}", "a key that is not a string"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", "no ':' after 'descr'"},
      {"{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,)}", "'descr' is not a string"},
  };
  for (const Bad &b : bad) {
    INFO(b.dict);
    writeRaw(f, b.dict, data);
    auto a = readNpy(f);
    REQUIRE(!a);
    CHECK(a.error().message ==
          f + ": the .npy header is not a dictionary of descr, fortran_order and shape: " + b.why);
  }
}

TEST_CASE("npy: an output view is saved in row-major order through its strides", "[npy]") {
  const std::string text = R"(kernel @fill(ptr<f32>, i64, i64, i64, i64) {
  host = "strided_fill"
}

func @main(%x: f32[?]) -> (f32[3, 4], f32[4, 3]) {
  %a = alloc f32[3, 4]
  launch @fill grid(1, 1, 1) block(1, 1, 1) smem(0) (%a, 3, 4, 4, 1)
  %b = alloc f32[4, 3] strides[1, 4]
  launch @fill grid(1, 1, 1) block(1, 1, 1) smem(0) (%b, 4, 3, 1, 4)
  return %a, %b
}
)";
  Program p = parseOk(text, "v.hir");
  auto rt = makeRuntime();
  Runner r(p, rt, false);
  auto in = InputSet::random(rt, r.plan(), {{"x", {2}}}, 1);
  REQUIRE(in);
  auto out = r.run(in->span());
  REQUIRE(out);
  auto a = toNpy((*out)[0]), b = toNpy((*out)[1]);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->shape == std::vector<int64_t>{4, 3});
  // b[i][j] sits at i + 4 j; NumPy order is row after row.
  std::vector<float> bv(12);
  std::memcpy(bv.data(), b->data.data(), 48);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) CHECK(bv[static_cast<size_t>(i * 3 + j)] == static_cast<float>(i * 1000 + j + 1));
}

TEST_CASE("Tensor::fromHost: an input from host data, freed with the tensor, outside the pool's counts", "[npy]") {
  auto rt = makeRuntime();
  std::vector<float> xs = {1.5f, -2, 3, 4.25f, 5, 6};
  {
    auto x = Tensor::fromHost(rt, {2, 3}, xs);
    REQUIRE(x);
    CHECK(x->dtype() == DType::f32);
    CHECK(x->sizes() == std::vector<int64_t>{2, 3});
    CHECK(x->stride(0) == 3);
    auto back = x->toHost();
    REQUIRE(back);
    CHECK(std::memcmp(back->data(), xs.data(), 24) == 0);
    CHECK(rt->stats().live_bytes == 0);  // not the pool's
    DLManagedTensor *m = x->release();
    m->deleter(m);
  }
  std::vector<int64_t> big = {7, 8};
  auto y = Tensor::fromHost(rt, {2}, big);
  REQUIRE(y);
  CHECK(y->dtype() == DType::i64);
  CHECK_THAT(Tensor::fromHost(rt, {4}, xs).error().message,
             Catch::Contains("24 bytes of data for f32[4], which holds 16"));
  CHECK_THAT(Tensor::fromHost(rt, {-1}, xs).error().message, Catch::Contains("negative size"));
  CHECK_THAT(Tensor::fromHost(rt, {1, 1, 1, 1, 1, 1, 1, 1, 1}, xs).error().message, Catch::Contains("rank 9"));
}
