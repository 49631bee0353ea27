// npy.cpp - reading and writing NumPy .npy files (contract in npy.h).
#include "hostjit/exec/npy.h"

#include "hostjit/ir/files.h"

#include <cctype>
#include <cstring>
#include <optional>

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

// The header: a Python literal, e.g. {'descr': '<f4', 'fortran_order':
// False, 'shape': (3, 4), }, read as ast.literal_eval reads it, with what
// numpy.load then requires: a dict with exactly these three keys (a key
// given twice keeps its last value, as in Python), descr a string,
// fortran_order a bool, shape a tuple of non-negative ints.
struct Header {
  std::string descr, shapeText;
  bool fortran = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(const std::string &t) : t_(t) {}

  // The header, or the reason it is not one numpy.load reads.
  std::optional<Header> parse(std::string *why) {
    Header h;
    bool seen[3] = {};
    skip();
    if (!eat('{')) return fail(why, "it does not start with '{'");
    while (skip(), !eat('}')) {
      std::string key;
      if (!str(&key)) return fail(why, "a key that is not a string");
      if (skip(), !eat(':')) return fail(why, "no ':' after '" + key + "'");
      skip();
      if (key == "descr") {
        if (!str(&h.descr)) return fail(why, "'descr' is not a string");
        seen[0] = true;
      } else if (key == "fortran_order") {
        if (word("True")) h.fortran = true;
        else if (word("False")) h.fortran = false;
        else return fail(why, "'fortran_order' is not True or False");
        seen[1] = true;
      } else if (key == "shape") {
        size_t from = i_;
        h.shape.clear();
        if (!tuple(&h.shape)) return fail(why, "'shape' is not a tuple of sizes");
        h.shapeText = t_.substr(from, i_ - from);
        seen[2] = true;
      } else {
        return fail(why, "an unexpected key '" + key + "'");
      }
      if (skip(), eat(',')) continue;
      if (skip(), !eat('}')) return fail(why, "no ',' or '}' after '" + key + "'");
      break;
    }
    if (skip(), i_ != t_.size()) return fail(why, "text after the dictionary's '}'");
    if (!seen[0] || !seen[1] || !seen[2]) return fail(why, "a key is missing");
    return h;
  }

 private:
  std::optional<Header> fail(std::string *why, std::string m) {
    *why = std::move(m);
    return std::nullopt;
  }
  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) { return i_ < t_.size() && t_[i_] == c ? (++i_, true) : false; }
  // A whole word: "True" but not "Truex".
  bool word(const char *w) {
    size_t n = std::strlen(w);
    if (t_.compare(i_, n, w) != 0) return false;
    if (i_ + n < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_ + n])) || t_[i_ + n] == '_')) return false;
    i_ += n;
    return true;
  }
  // A plain '...' or "..." string; escapes and prefixes are refused.
  bool str(std::string *out) {
    if (i_ >= t_.size() || (t_[i_] != '\'' && t_[i_] != '"')) return false;
    char q = t_[i_];
    size_t end = t_.find_first_of(std::string(1, q) + "\\\n", i_ + 1);
    if (end == std::string::npos || t_[end] != q) return false;
    *out = t_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return true;
  }
  // (), (3,), (3, 4) or (3, 4,): decimal sizes; (3) is an int, not a tuple.
  bool tuple(std::vector<int64_t> *out) {
    if (!eat('(')) return false;
    if (skip(), eat(')')) return true;
    for (;;) {
      size_t from = i_;
      while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
      std::string digits = t_.substr(from, i_ - from);
      if (digits.empty() || digits.size() > 18 || (digits.size() > 1 && digits[0] == '0')) return false;
      out->push_back(std::stoll(digits));
      skip();
      bool comma = eat(',');
      if (skip(), eat(')')) return comma || out->size() > 1;
      if (!comma) return false;
    }
  }

  const std::string &t_;
  size_t i_ = 0;
};

}  // namespace

Expected<NpyArray> readNpy(const std::string &path) {
  auto file = readFileBytes(path, kMaxDataFileBytes);
  if (!file) return file.error();
  const std::string &bytes = *file;
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
  std::string dict = bytes.substr(start, headerLen), why;
  auto header = HeaderParser(dict).parse(&why);
  if (!header) return bad(path, "the .npy header is not a dictionary of descr, fortran_order and shape: " + why);
  const std::string &d = header->descr;
  if (header->fortran) return bad(path, "a Fortran-order array; save it in C order (numpy.ascontiguousarray)");
  if (!d.empty() && d[0] == '>')
    return bad(path, "a big-endian array (dtype '" + d + "'); hostjit reads little-endian data");
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
  a.shape = header->shape;
  const std::string *shape = &header->shapeText;
  if (a.shape.size() > kMaxRank)
    return bad(path, "an array of " + std::to_string(a.shape.size()) + " dims; hostjit tensors have at most 8");
  uint64_t want = 0;  // as numpy.load, the non-zero dims' product must fit
  if (!denseBytes(a.shape, dtypeBytes(a.dtype), HJ_MAX_BUFFER_BYTES, &want)) return bad(path, "the shape is too large");
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
  char prefix[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(header.size() & 0xff),
                     static_cast<char>(header.size() >> 8)};
  std::string bytes(prefix, sizeof prefix);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(a.data.data()), a.data.size());
  return writeFileBytes(path, bytes);
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
