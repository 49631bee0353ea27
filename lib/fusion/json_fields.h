// json_fields.h - reading the fields of a JSON description (a fusion, an
// Inductor program) with errors that name each field's JSON path:
// "segments[2].launch.grid[0]: expected an expression ...".
#pragma once

#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "hostjit/fusion/fusion.h"
#include "json_text.h"

namespace hostjit {

// Thrown by JsonFields; the reader's entry point turns it into an Error.
struct BadField {
  std::string message;
};

// The checks every reader of a JSON description makes; readers derive from it.
class JsonFields {
 protected:
  using json = nlohmann::json;

  [[noreturn]] void fail(const std::string &path, const std::string &msg) const {
    throw BadField{(path.empty() ? std::string("the top level") : path) + ": " + msg};
  }
  static std::string at(const std::string &field, size_t i) { return field + "[" + std::to_string(i) + "]"; }
  static std::string join(const std::string &path, const std::string &key) { return path.empty() ? key : path + "." + key; }
  static std::string kindOf(const json &j) { return j.type_name(); }

  void object(const json &j, const std::string &path, std::initializer_list<const char *> keys) const {
    object(j, path, std::vector<const char *>(keys));
  }
  void object(const json &j, const std::string &path, const std::vector<const char *> &keys) const {
    if (!j.is_object()) fail(path, "expected an object, got " + kindOf(j));
    for (const auto &[k, v] : j.items()) {
      bool known = false;
      std::string list;
      for (const char *key : keys) {
        known |= k == key;
        list += (list.empty() ? "" : ", ") + std::string(key);
      }
      if (!known) fail(join(path, k), "unknown field (expected one of: " + list + ")");
    }
  }

  const json &field(const json &j, const std::string &key, const std::string &path, const char *what) const {
    if (!j.contains(key)) fail(path, "missing '" + key + "' (" + what + ")");
    return j[key];
  }

  const json &array(const json &j, const std::string &key, const std::string &path) const {
    const json &a = field(j, key, path, "an array");
    if (!a.is_array()) fail(join(path, key), "expected an array, got " + kindOf(a));
    return a;
  }

  std::string string(const json &j, const std::string &path) const {
    if (!j.is_string()) fail(path, "expected a string, got " + kindOf(j));
    return j.get<std::string>();
  }

  bool boolean(const json &j, const std::string &key, const std::string &path) const {
    if (!j.contains(key)) return false;
    if (!j[key].is_boolean()) fail(join(path, key), "expected true or false, got " + kindOf(j[key]));
    return j[key].get<bool>();
  }

  DType dtype(const json &j, const std::string &path) const {
    std::string s = string(j, path);
    auto d = parseDType(s);
    if (!d) fail(path, "unknown dtype '" + s + "' (expected f16, bf16, f32, f64, i8, i16, i32, i64, u8, u32, u64 or bool)");
    return *d;
  }

  SizeExpr expr(const json &j, const std::string &path) const {
    if (j.is_number_integer()) {
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        fail(path, "an integer literal out of range: it does not fit i64");
      return SizeExpr::integer(j.get<int64_t>());
    }
    if (j.is_number_float()) return SizeExpr::floating(j.get<double>());
    if (!j.is_string()) fail(path, "expected an expression (a string such as \"ceildiv(size(x, 0), 256)\", or a number), got " + kindOf(j));
    auto e = SizeExpr::parse(j.get<std::string>());
    if (!e) fail(path, "in '" + j.get<std::string>() + "': " + e.error().message);
    return *e;
  }

  std::vector<SizeExpr> exprs(const json &j, const std::string &key, const std::string &path) const {
    std::vector<SizeExpr> out;
    for (size_t i = 0; const json &x : array(j, key, path)) out.push_back(expr(x, at(join(path, key), i++)));
    return out;
  }

  std::array<SizeExpr, 3> triple(const json &j, const std::string &key, const std::string &path) const {
    std::string p = join(path, key);
    const json &a = field(j, key, path, "an array of 3 expressions: x, y, z");
    if (!a.is_array() || a.size() != 3) fail(p, "expected an array of 3 expressions (x, y, z)");
    return {expr(a[0], at(p, 0)), expr(a[1], at(p, 1)), expr(a[2], at(p, 2))};
  }
};

}  // namespace hostjit
