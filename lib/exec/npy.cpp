// npy.cpp - reading and writing NumPy .npy files (contract in npy.h).
#include "hostjit/exec/npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

namespace hostjit {

namespace {

struct Descr {
  const char *text;  // the dtype string NumPy writes, byte order included
  DType dtype;
};
// '|' (no byte order) for one-byte types, '<' little-endian otherwise.
const Descr kDescrs[] = {{"<f2", DType::f16}, {"<f4", DType::f32}, {"<f8", DType::f64}, {"|i1", DType::i8},
                         {"<i2", DType::i16}, {"<i4", DType::i32}, {"<i8", DType::i64}, {"|u1", DType::u8},
                         {"<u4", DType::u32}, {"<u8", DType::u64}, {"|b1", DType::Bool}};

Error bad(const std::string &path, const std::string &what) { return Error{HJ_ERR_INVALID_ARGUMENT, path + ": " + what}; }

// The header's dictionary, e.g. {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), }: the value text of a key, or nullopt.
std::optional<std::string> field(const std::string &dict, const std::string &key) {
  size_t k = dict.find("'" + key + "'");
  if (k == std::string::npos) return std::nullopt;
  size_t colon = dict.find(':', k);
  if (colon == std::string::npos) return std::nullopt;
  size_t v = dict.find_first_not_of(" ", colon + 1);
  if (v == std::string::npos) return std::nullopt;
  char open = dict[v];
  size_t end;
  if (open == '\'') end = dict.find('\'', v + 1);
  else if (open == '(') end = dict.find(')', v + 1);
  else end = dict.find_first_of(",}", v) - 1;
  if (end == std::string::npos || end < v) return std::nullopt;
  return dict.substr(v, end - v + 1);
}

}  // namespace

Expected<NpyArray> readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad(path, "cannot read the file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return bad(path, "not a NumPy .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen = 0, start = 0;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad(path, "the .npy header is cut short");
    for (int i = 0; i < 4; ++i) headerLen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    start = 12;
  } else {
    return bad(path, ".npy format version " + std::to_string(major) + " is not one hostjit reads (1, 2 or 3)");
  }
  if (bytes.size() < start + headerLen) return bad(path, "the .npy header is cut short");
  std::string dict = bytes.substr(start, headerLen);
  auto descr = field(dict, "descr"), order = field(dict, "fortran_order"), shape = field(dict, "shape");
  if (!descr || !order || !shape || descr->size() < 3 || (*shape)[0] != '(')
    return bad(path, "the .npy header is not a dictionary of descr, fortran_order and shape");
  std::string d = descr->substr(1, descr->size() - 2);
  if (*order != "False") return bad(path, "a Fortran-order array; save it in C order (numpy.ascontiguousarray)");
  if (d[0] == '>') return bad(path, "a big-endian array (dtype '" + d + "'); hostjit reads little-endian data");
  NpyArray a;
  bool known = false;
  // Any of '<', '=' (native: little-endian on x86-64) and '|' before the type code.
  bool little = d.size() >= 2 && (d[0] == '<' || d[0] == '=' || d[0] == '|');
  for (const Descr &x : kDescrs)
    if (little && d.substr(1) == x.text + 1) {
      a.dtype = x.dtype;
      known = true;
      break;
    }
  if (!known)
    return bad(path, "dtype '" + d + "' has no hostjit element type (float16/32/64, int8/16/32/64, uint8/32/64, bool)");
  std::string dims = shape->substr(1, shape->size() - 2);
  std::istringstream ds(dims);
  std::string part;
  while (std::getline(ds, part, ',')) {
    size_t b = part.find_first_not_of(" "), e = part.find_last_not_of(" ");
    if (b == std::string::npos) continue;
    part = part.substr(b, e - b + 1);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18)
      return bad(path, "the shape " + *shape + " is not a tuple of sizes");
    a.shape.push_back(std::stoll(part));
  }
  if (a.shape.size() > kMaxRank)
    return bad(path, "an array of " + std::to_string(a.shape.size()) + " dims; hostjit tensors have at most 8");
  uint64_t n = 1;
  for (int64_t s : a.shape)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(s), &n)) return bad(path, "the shape is too large");
  uint64_t want = 0;
  if (__builtin_mul_overflow(n, dtypeBytes(a.dtype), &want)) return bad(path, "the shape is too large");
  size_t have = bytes.size() - start - headerLen;
  if (have < want)
    return bad(path, "the data is cut short: " + std::to_string(have) + " bytes for a shape " + *shape + " of " +
                         std::to_string(want) + " bytes");
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(start + headerLen),
                bytes.begin() + static_cast<std::ptrdiff_t>(start + headerLen + want));
  return a;
}

Expected<void> writeNpy(const std::string &path, const NpyArray &a) {
  const char *descr = nullptr;
  for (const Descr &x : kDescrs)
    if (x.dtype == a.dtype) descr = x.text;
  if (!descr) return bad(path, std::string(dtypeName(a.dtype)) + " has no NumPy dtype; it cannot be saved as .npy");
  std::string shape = "(";  // as NumPy writes it: (), (3,), (3, 4)
  for (size_t d = 0; d < a.shape.size(); ++d) shape += (d ? ", " : "") + std::to_string(a.shape[d]);
  shape += a.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic, version, length, then the dictionary padded with spaces and a
  // newline so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return bad(path, "cannot write the file");
  char prefix[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(header.size() & 0xff),
                     static_cast<char>(header.size() >> 8)};
  out.write(prefix, sizeof prefix);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char *>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
  if (!out) return bad(path, "cannot write the file");
  return {};
}

Expected<NpyArray> toNpy(const Tensor &t) {
  auto host = t.toHost();
  if (!host) return host.error();
  NpyArray a;
  a.dtype = t.dtype();
  a.shape = t.sizes();
  uint32_t eb = dtypeBytes(t.dtype());
  int64_t n = 1;
  for (int64_t s : a.shape) n *= s;
  a.data.resize(static_cast<size_t>(n) * eb);
  std::vector<int64_t> index(a.shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * t.stride(static_cast<uint32_t>(d));
    std::memcpy(a.data.data() + static_cast<size_t>(k) * eb, host->data() + static_cast<size_t>(offset) * eb, eb);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < a.shape[d]) break;
      index[d] = 0;
    }
  }
  return a;
}

}  // namespace hostjit
