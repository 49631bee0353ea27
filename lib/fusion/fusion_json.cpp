// fusion_json.cpp - reads a Fusion from JSON (docs/fusion-json.md), naming the JSON path of every bad field.
#include <set>

#include "hostjit/fusion/fusion.h"
#include "hostjit/ir/files.h"
#include "json_fields.h"

namespace hostjit {

namespace {

using nlohmann::json;

class Reader : public JsonFields {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Fusion fusion(const json &j) {
    Fusion f;
    f.file = file_;
    object(j, "", {"name", "inputs", "outputs", "kernels", "segments"});
    if (j.contains("name")) f.name = string(j["name"], "name");
    for (size_t i = 0; const json &x : array(j, "inputs", "")) f.inputs.push_back(input(x, at("inputs", i++)));
    for (size_t i = 0; const json &x : array(j, "outputs", "")) f.outputs.push_back(string(x, at("outputs", i++)));
    if (j.contains("kernels"))
      for (size_t i = 0; const json &x : array(j, "kernels", "")) f.kernels.push_back(kernel(x, at("kernels", i++)));
    for (size_t i = 0; const json &x : array(j, "segments", "")) f.segments.push_back(segment(x, at("segments", i++)));
    return f;
  }

 private:
  FusionInput input(const json &j, const std::string &path) const {
    object(j, path, {"name", "dtype", "dims"});
    FusionInput in;
    in.name = string(field(j, "name", path, "a string"), join(path, "name"));
    in.dtype = dtype(field(j, "dtype", path, "a dtype such as \"f32\""), join(path, "dtype"));
    in.isTensor = j.contains("dims");
    if (in.isTensor) {
      for (size_t i = 0; const json &d : array(j, "dims", path)) {
        std::string p = at(join(path, "dims"), i++);
        if (d.is_string() && d.get<std::string>() == "?") in.dims.push_back(kDynamic);
        else if (d.is_number_integer() && d.get<int64_t>() >= 0) in.dims.push_back(d.get<int64_t>());
        else fail(p, "expected \"?\" or an integer >= 0, got " + jsonQuote(d));
      }
    }
    return in;
  }

  ParamType param(const json &j, const std::string &path) const {
    std::string s = string(j, path), t;
    for (char c : s)
      if (c != ' ') t += c;
    auto bad = [&] {
      fail(path, "'" + s + "' is not a parameter type (expected ptr<dtype>, tensor<dtype, rank> or a scalar type)");
    };
    ParamType pt;
    if (t.rfind("ptr<", 0) == 0 && t.back() == '>') {
      auto d = parseDType(t.substr(4, t.size() - 5));
      if (!d) bad();
      pt.isPointer = true;
      pt.dtype = *d;
    } else if (t.rfind("tensor<", 0) == 0 && t.back() == '>') {
      size_t comma = t.find(',');
      if (comma == std::string::npos) bad();
      auto d = parseDType(t.substr(7, comma - 7));
      std::string r = t.substr(comma + 1, t.size() - comma - 2);
      if (!d || r.empty() || r.size() > 1 || r[0] < '0' || r[0] > '8') bad();
      pt.isStruct = true;
      pt.dtype = *d;
      pt.rank = static_cast<uint32_t>(r[0] - '0');
    } else {
      auto d = parseDType(t);
      if (!d) bad();
      pt.dtype = *d;
    }
    return pt;
  }

  Kernel kernel(const json &j, const std::string &path) const {
    std::vector<const char *> keys = {"name", "params"};
#define HOSTJIT_KERNEL_ATTR(key, member, kind, owner, example) \
  if (std::string_view(#owner) == "Kernel") keys.push_back(key);
#include "hostjit/ir/kernel_attrs.def"
#undef HOSTJIT_KERNEL_ATTR
    object(j, path, keys);
    Kernel k;
    k.name = string(field(j, "name", path, "a string"), join(path, "name"));
    for (size_t i = 0; const json &x : array(j, "params", path)) k.params.push_back(param(x, at(join(path, "params"), i++)));
    auto Text = [&](const char *key, const char *) -> std::optional<std::string> {
      if (!j.contains(key)) return std::nullopt;
      return string(j[key], join(path, key));
    };
    auto Flag = [&](const char *key, const char *) { return boolean(j, key, path); };
    auto Dims = [&](const char *key, const char *example) { return dim3(j, key, path, example); };
    // A custom call's attributes are not a fusion's (no custom calls there).
#define HOSTJIT_KERNEL_ATTR(key, member, kind, owner, example) \
  if constexpr (std::string_view(#owner) == "Kernel") k.member = kind(key, example);
#include "hostjit/ir/kernel_attrs.def"
#undef HOSTJIT_KERNEL_ATTR
    return k;
  }

  // Three dims of a kernel attribute (cluster, block); none when absent.
  std::optional<std::array<int64_t, 3>> dim3(const json &j, const char *key, const std::string &path,
                                             const char *example) const {
    if (!j.contains(key)) return std::nullopt;
    std::string cp = join(path, key);
    const json &c = j[key];
    if (!c.is_array() || c.size() != 3)
      fail(cp, std::string("expected an array of three ") + key + " dims such as " + example + ", got " +
                   (c.is_array() ? "an array of " + std::to_string(c.size()) : kindOf(c)));
    std::array<int64_t, 3> dims{};
    for (size_t i = 0; i < 3; ++i) {
      if (!c[i].is_number_integer()) fail(at(cp, i), "expected an integer, got " + kindOf(c[i]));
      dims[i] = c[i].get<int64_t>();
    }
    return dims;
  }

  // A summary entry named like one of `outputs` may leave out its dtype and
  // extents: they are the output's.
  TensorSpec tensor(const json &j, const std::string &path, bool summary, const std::vector<TensorSpec> *outputs = nullptr) const {
    if (summary && !outputs) object(j, path, {"name", "dtype", "extents", "strides", "zero_init", "resets_to_zero"});
    else if (summary) object(j, path, {"name", "dtype", "extents", "strides", "zero_init", "resets_to_zero", "alias_of"});
    else object(j, path, {"name", "dtype", "extents", "strides", "alias_of", "offset"});
    TensorSpec t;
    t.name = string(field(j, "name", path, "a string"), join(path, "name"));
    bool alias = j.contains("alias_of");
    if (alias) t.aliasOf = string(j["alias_of"], join(path, "alias_of"));
    const TensorSpec *out = nullptr;
    if (outputs)
      for (const TensorSpec &o : *outputs)
        if (o.name == t.name) out = &o;
    // A summary alias needs no dtype or extents: it has no buffer.
    bool optional = summary && (alias || out);
    if (!optional || j.contains("dtype")) t.dtype = dtype(field(j, "dtype", path, "a dtype such as \"f32\""), join(path, "dtype"));
    else if (out) t.dtype = out->dtype;
    if (!optional || j.contains("extents")) t.extents = exprs(j, "extents", path);
    else if (out) t.extents = out->extents;
    if (j.contains("strides")) t.strides = exprs(j, "strides", path);
    if (j.contains("offset")) {
      if (!alias) fail(join(path, "offset"), "only a view (an output with alias_of) has an offset");
      t.offset = expr(j["offset"], join(path, "offset"));
    }
    t.zeroInit = boolean(j, "zero_init", path);
    t.resetsToZero = boolean(j, "resets_to_zero", path);
    return t;
  }

  Segment segment(const json &j, const std::string &path) const {
    object(j, path, {"name", "kernel", "matmul", "inputs", "outputs", "summary", "scalars", "scratch", "launch"});
    Segment s;
    if (j.contains("name")) s.name = string(j["name"], join(path, "name"));
    if (j.contains("kernel")) s.kernel = string(j["kernel"], join(path, "kernel"));
    if (j.contains("matmul")) {
      std::string mp = join(path, "matmul");
      const json &m = j["matmul"];
      object(m, mp, {"transpose_a", "transpose_b", "bias", "alpha", "workspace_bytes"});
      MatmulSpec spec;
      spec.transposeA = boolean(m, "transpose_a", mp);
      spec.transposeB = boolean(m, "transpose_b", mp);
      spec.bias = boolean(m, "bias", mp);
      if (m.contains("alpha")) {
        if (!m["alpha"].is_number()) fail(join(mp, "alpha"), "expected a number, got " + kindOf(m["alpha"]));
        spec.alpha = m["alpha"].get<double>();
      }
      if (m.contains("workspace_bytes")) spec.workspaceBytes = expr(m["workspace_bytes"], join(mp, "workspace_bytes"));
      s.matmul = spec;
    }
    for (size_t i = 0; const json &x : array(j, "inputs", path)) s.inputs.push_back(string(x, at(join(path, "inputs"), i++)));
    for (size_t i = 0; const json &x : array(j, "outputs", path))
      s.outputs.push_back(tensor(x, at(join(path, "outputs"), i++), false));
    if (j.contains("summary"))
      for (size_t i = 0; const json &x : array(j, "summary", path))
        s.summary.push_back(tensor(x, at(join(path, "summary"), i++), true, &s.outputs));
    if (j.contains("scalars")) s.scalars = exprs(j, "scalars", path);
    if (j.contains("scratch"))
      for (size_t i = 0; const json &x : array(j, "scratch", path))
        s.scratch.push_back(tensor(x, at(join(path, "scratch"), i++), true));
    if (j.contains("launch")) {
      std::string lp = join(path, "launch");
      const json &l = j["launch"];
      object(l, lp, {"grid", "block", "smem"});
      s.grid = triple(l, "grid", lp);
      s.block = triple(l, "block", lp);
      s.smem = l.contains("smem") ? expr(l["smem"], join(lp, "smem")) : SizeExpr::integer(0);
    } else if (s.kernel) {
      fail(path, "missing 'launch' ({\"grid\": [x, y, z], \"block\": [x, y, z], \"smem\": bytes}) for kernel '" + *s.kernel + "'");
    }
    return s;
  }

  std::string file_;
};

}  // namespace

Expected<Fusion> parseFusionJson(std::string_view text, const std::string &filename) {
  std::string prefix = filename.empty() ? std::string() : filename + ": ";
  auto parsed = parseJsonText(text, filename);
  if (!parsed) return parsed.error();
  const json &j = *parsed;
  try {
    return Reader(filename).fusion(j);
  } catch (const BadField &b) {
    return Error{HJ_ERR_INVALID_ARGUMENT, prefix + b.message};
  } catch (const json::exception &e) {
    return Error{HJ_ERR_INVALID_ARGUMENT, prefix + e.what()};
  }
}

Expected<Fusion> loadFusionJson(const std::string &path) {
  auto text = readFileBytes(path, kMaxTextFileBytes);
  if (!text) return text.error();
  return parseFusionJson(*text, path);
}

}  // namespace hostjit
