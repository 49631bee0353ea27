// triton.cpp - reads a Triton cache entry (metadata JSON, TTIR signature,
// image) into a TritonKernel and prints it as Host IR or fusion JSON.
#include "hostjit/fusion/triton.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "hostjit/ir/files.h"
#include "hostjit/text/text.h"
#include "json_text.h"
#include "nlohmann/json.hpp"

namespace hostjit {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

Error bad(const std::string &file, const std::string &what) { return Error{HJ_ERR_INVALID_ARGUMENT, file + ": " + what}; }

// Scans, not regexes: libstdc++'s regex recurses per character, and these
// files may be anything.
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isName(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), identChar);
}
size_t skipBlanks(const std::string &t, size_t i) {
  while (i < t.size() && blank(t[i])) ++i;
  return i;
}
// Where `keyword` is followed by blanks, optionally `extra` and blanks,
// then `@name` and `(`: the position after the `(`, or npos.
size_t findSignature(const std::string &t, const std::string &keyword, const std::string &name, bool atSign) {
  for (size_t at = t.find(keyword); at != std::string::npos; at = t.find(keyword, at + 1)) {
    size_t i = at + keyword.size();
    if (i >= t.size() || !blank(t[i])) continue;
    i = skipBlanks(t, i);
    if (keyword == "tt.func" && t.compare(i, 6, "public") == 0 && i + 6 < t.size() && blank(t[i + 6]))
      i = skipBlanks(t, i + 6);
    if (atSign) {
      if (i >= t.size() || t[i] != '@') continue;
      ++i;
    }
    if (t.compare(i, name.size(), name) != 0) continue;
    i += name.size();
    if (i < t.size() && identChar(t[i])) continue;  // a longer name
    i = skipBlanks(t, i);
    if (i < t.size() && t[i] == '(') return i + 1;
  }
  return std::string::npos;
}

Expected<std::string> readText(const std::string &path) { return readFileBytes(path, kMaxTextFileBytes); }

// The metadata file of `path`: itself, or the one non-group .json in it.
Expected<std::string> metadataFile(const std::string &path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  std::vector<std::string> found;
  for (const auto &e : fs::directory_iterator(path, ec)) {
    std::string n = e.path().filename().string();
    if (e.path().extension() == ".json" && n.rfind("__grp__", 0) != 0) found.push_back(e.path().string());
  }
  if (found.size() != 1)
    return bad(path, "expected one Triton metadata .json in the directory, found " + std::to_string(found.size()));
  return found[0];
}

// An integer field: present (or `fallback` when optional), an integer, in
// [lo, hi].
Expected<int64_t> integer(const json &j, const std::string &file, const char *key, int64_t lo, int64_t hi,
                          std::optional<int64_t> fallback = std::nullopt) {
  if (!j.contains(key) || j[key].is_null()) {
    if (fallback) return *fallback;
    return bad(file, std::string(key) + ": missing (a Triton kernel's metadata has it)");
  }
  const json &v = j[key];
  if (!v.is_number_integer()) return bad(file, std::string(key) + ": expected an integer, got " + jsonQuote(v));
  int64_t x = v.get<int64_t>();
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return bad(file, std::string(key) + ": " + jsonQuote(v) + " does not fit i64");
  if (x < lo || x > hi)
    return bad(file, std::string(key) + ": " + std::to_string(x) + " is outside [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]");
  return x;
}

Expected<bool> boolean(const json &j, const std::string &file, const char *key) {
  if (!j.contains(key) || j[key].is_null()) return false;
  if (!j[key].is_boolean()) return bad(file, std::string(key) + ": expected true or false, got " + jsonQuote(j[key]));
  return j[key].get<bool>();
}

std::optional<DType> tritonDtype(const std::string &t) {
  static const std::pair<const char *, DType> kTypes[] = {
      {"i1", DType::Bool}, {"i8", DType::i8},   {"i16", DType::i16}, {"i32", DType::i32},  {"i64", DType::i64},
      {"f16", DType::f16}, {"bf16", DType::bf16}, {"f32", DType::f32}, {"f64", DType::f64}};
  for (const auto &[name, d] : kTypes)
    if (t == name) return d;
  return std::nullopt;
}

// The arguments of `tt.func ... @name(...)`, split at the top-level commas.
Expected<std::vector<std::string>> ttirArguments(const std::string &ttir, const std::string &file,
                                                 const std::string &name) {
  size_t start = findSignature(ttir, "tt.func", name, true);
  if (start == std::string::npos) return bad(file, "no 'tt.func @" + name + "(' in it");
  std::vector<std::string> args;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (size_t i = start; i < ttir.size(); ++i) {
    char c = ttir[i];
    if (quoted) {
      if (c == '\\' && i + 1 < ttir.size()) cur += c, c = ttir[++i];
      else if (c == '"') quoted = false;
      cur += c;
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '(' || c == '{' || c == '[' || c == '<') ++depth;
    if (c == '>' && depth > 0 && i > 0 && ttir[i - 1] != '-') --depth;
    if (c == ')' || c == '}' || c == ']') {
      if (depth == 0) {
        if (c != ')') return bad(file, "the signature of @" + name + " is malformed");
        if (!cur.empty()) args.push_back(cur);
        return args;
      }
      --depth;
    }
    if (c == ',' && depth == 0) {
      args.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  return bad(file, "the signature of @" + name + " does not end");
}

Expected<void> readParams(TritonKernel &k, const std::string &ttirFile) {
  auto ttir = readText(ttirFile);
  if (!ttir) return Error{ttir.error().status, ttir.error().message + " (the TTIR gives the parameter types)"};
  auto args = ttirArguments(*ttir, ttirFile, k.name);
  if (!args) return args.error();
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string &a = (*args)[i];
    // %name: TYPE, where TYPE is !tt.ptr<ELEM[, SPACE]> or a scalar type.
    size_t at = skipBlanks(a, 0), nameStart = at + 1;
    size_t nameEnd = nameStart;
    while (nameEnd < a.size() && (identChar(a[nameEnd]) || a[nameEnd] == '.' || a[nameEnd] == '-' || a[nameEnd] == '$'))
      ++nameEnd;
    size_t colon = skipBlanks(a, nameEnd);
    size_t type = colon < a.size() ? skipBlanks(a, colon + 1) : a.size();
    bool pointer = a.compare(type, 8, "!tt.ptr<") == 0;
    size_t elemStart = pointer ? skipBlanks(a, type + 8) : type, elemEnd = elemStart;
    while (elemEnd < a.size() && identChar(a[elemEnd])) ++elemEnd;
    if (at >= a.size() || a[at] != '%' || nameEnd == nameStart || colon >= a.size() || a[colon] != ':' ||
        elemEnd == elemStart)
      return bad(ttirFile, "parameter " + std::to_string(i) + " of @" + k.name + ": cannot read '" + a + "'");
    std::string pname = a.substr(nameStart, nameEnd - nameStart);
    std::string elem = a.substr(elemStart, elemEnd - elemStart);
    auto d = tritonDtype(elem);
    ParamType pt;
    pt.isPointer = pointer;
    if (!d || (!pointer && !isScalarType(*d)))
      return bad(ttirFile, "parameter " + std::to_string(i) + " (%" + pname + ") of @" + k.name + " is " +
                               (pointer ? "a pointer to " + elem : elem) + ", which a Host IR kernel cannot take");
    pt.dtype = *d;
    k.params.push_back(pt);
    k.paramNames.push_back(pname);
  }
  return {};
}

// The parameter count of the PTX's .entry, or -1.
int ptxParamCount(const std::string &ptx, const std::string &name) {
  size_t start = findSignature(ptx, ".entry", name, false);
  if (start == std::string::npos) return -1;
  size_t end = ptx.find(')', start);
  if (end == std::string::npos) return -1;
  std::string params = ptx.substr(start, end - start);
  int n = 0;
  for (size_t at = 0; (at = params.find(".param", at)) != std::string::npos; at += 6) ++n;
  return n;
}

}  // namespace

Expected<TritonKernel> readTritonKernel(const std::string &path) {
  auto file = metadataFile(path);
  if (!file) return file.error();
  auto text = readText(*file);
  if (!text) return text.error();
  auto parsed = parseJsonText(*text, *file);
  if (!parsed) return parsed.error();
  const json &j = *parsed;
  if (!j.is_object()) return bad(*file, "expected a JSON object (Triton's metadata)");
  TritonKernel k;
  if (!j.contains("name") || !j["name"].is_string()) return bad(*file, "name: missing or not a string");
  k.name = j["name"].get<std::string>();
  if (!isName(k.name)) return bad(*file, "name: '" + k.name.substr(0, 64) + "' is not a kernel name");
  if (j.contains("triton_version") && j["triton_version"].is_string()) k.version = j["triton_version"].get<std::string>();
  // It goes into a comment line of the declaration.
  if (std::any_of(k.version.begin(), k.version.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    return bad(*file, "triton_version: " + jsonQuote(j["triton_version"]) + " holds a control character");
  struct Field {
    const char *key;
    int64_t *out, lo, hi;
    std::optional<int64_t> fallback;
  } fields[] = {
      {"num_warps", &k.numWarps, 1, 32, std::nullopt},
      {"num_ctas", &k.numCtas, 1, 16, 1},
      {"shared", &k.shared, 0, INT32_MAX, std::nullopt},
      {"global_scratch_size", &k.globalScratchSize, 0, int64_t(1) << 40, 0},
      {"global_scratch_align", &k.globalScratchAlign, 1, 256, 1},
      {"profile_scratch_size", &k.profileScratchSize, 0, int64_t(1) << 40, 0},
      {"profile_scratch_align", &k.profileScratchAlign, 1, 256, 1},
  };
  for (const Field &f : fields) {
    auto v = integer(j, *file, f.key, f.lo, f.hi, f.fallback);
    if (!v) return v.error();
    *f.out = *v;
  }
  for (int64_t align : {k.globalScratchAlign, k.profileScratchAlign})
    if (align & (align - 1)) return bad(*file, "a scratch alignment of " + std::to_string(align) + " is not a power of two");
  if (j.contains("target") && j["target"].is_object() && j["target"].contains("arch")) {
    auto a = integer(j["target"], *file + ": target", "arch", 0, 1000);
    if (!a) return a.error();
    k.arch = *a;
  }
  auto coop = boolean(j, *file, "launch_cooperative_grid");
  if (!coop) return coop.error();
  auto pdl = boolean(j, *file, "launch_pdl");
  if (!pdl) return pdl.error();
  k.cooperative = *coop, k.pdl = *pdl;
  if (j.contains("cluster_dims") && !j["cluster_dims"].is_null()) {
    const json &c = j["cluster_dims"];
    if (!c.is_array() || c.size() != 3) return bad(*file, "cluster_dims: expected three integers, got " + jsonQuote(c));
    for (const json &d : c) {
      // num_ctas (at most 16) is their product: no dim is larger.
      if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > 16)
        return bad(*file, "cluster_dims: expected three integers in [1, 16], got " + jsonQuote(c));
      k.clusterDims.push_back(d.get<int64_t>());
    }
  }
  // Programs of num_ctas CTAs are launched as clusters: cluster_dims where
  // the metadata gives them, else num_ctas along x; the launch's grid counts
  // CTAs, the programs times the cluster.
  bool clusterGiven = false;
  for (int64_t d : k.clusterDims) clusterGiven |= d != 1;
  if (clusterGiven) {
    int64_t ctas = k.clusterDims[0] * k.clusterDims[1] * k.clusterDims[2];
    if (ctas != k.numCtas)
      return bad(*file, "cluster_dims: " + jsonQuote(j["cluster_dims"]) + " make clusters of " + std::to_string(ctas) +
                            " CTAs, but num_ctas is " + std::to_string(k.numCtas));
    k.cluster = {k.clusterDims[0], k.clusterDims[1], k.clusterDims[2]};
  } else if (k.numCtas != 1) {
    k.cluster = {k.numCtas, 1, 1};
  }
  // The files beside the metadata share its stem: the kernel's name, or
  // its first 150 characters where Triton shortened a long one.
  fs::path dir = fs::path(*file).parent_path();
  std::string stem = fs::path(*file).stem().string();
  fs::path ttir = dir / (stem + ".ttir");
  if (!fs::exists(ttir)) ttir = dir / (stem + ".source");
  if (auto ok = readParams(k, ttir.string()); !ok) return ok.error();
  for (const char *key : {"global_scratch_size", "profile_scratch_size"})
    if (j.contains(key)) {
      ParamType p;
      p.isPointer = true;
      p.dtype = DType::u8;
      k.params.push_back(p);
      k.paramNames.push_back(std::string(key).substr(0, std::string(key).size() - 5));
      ++k.hidden;
    }
  fs::path cubin = dir / (stem + ".cubin"), ptx = dir / (stem + ".ptx");
  std::error_code ec;
  for (const fs::path &image : {cubin, ptx}) {
    if (!fs::exists(fs::symlink_status(image, ec)) && !fs::exists(image, ec)) continue;
    if (!fs::is_regular_file(image, ec)) return bad(image.string(), "not a regular file; expected the kernel's compiled image");
    k.image = image.string();
    break;
  }
  try {  // a fusion's JSON names it too: it must be UTF-8
    (void)json(k.image).dump();
  } catch (const json::exception &) {
    return bad(*file, "the image's path is not UTF-8 text");
  }
  if (k.image.empty())
    return bad(*file, "no compiled image beside it: expected " + cubin.filename().string() + " or " +
                          ptx.filename().string() + " in " + (dir.empty() ? std::string(".") : dir.string()));
  if (fs::is_regular_file(ptx, ec)) {
    auto ptxText = readFileBytes(ptx.string(), kMaxDataFileBytes);
    if (!ptxText) return ptxText.error();
    int n = ptxParamCount(*ptxText, k.name);
    if (n >= 0 && n != static_cast<int>(k.params.size()))
      return bad(ptx.string(), "@" + k.name + " takes " + std::to_string(n) + " parameters, but the TTIR and the metadata give " +
                                   std::to_string(k.params.size()) + " (" + std::to_string(k.params.size() - k.hidden) +
                                   " and " + std::to_string(k.hidden) + " scratch pointers)");
  }
  return k;
}

std::string tritonHirDeclaration(const TritonKernel &k) {
  // The declaration is IR, printed by the printer: what parse reads back.
  Kernel decl;
  decl.name = k.name;
  decl.params = k.params;
  decl.entry = k.name;
  if (!k.image.empty()) decl.image = k.image;
  decl.cooperative = k.cooperative;
  decl.pdl = k.pdl;
  if (k.clustered()) decl.cluster = k.cluster;
  decl.block = std::array<int64_t, 3>{k.blockThreads(), 1, 1};
  KernelComments comments;
  comments.decl.leading.push_back(" Triton " + (k.version.empty() ? std::string() : k.version + " ") + "kernel " +
                                  k.name + (k.arch ? " for sm_" + std::to_string(k.arch) : std::string()) +
                                  ": launch with block(" + std::to_string(k.blockThreads()) + ", 1, 1) smem(" +
                                  std::to_string(k.shared) + ").");
  if (k.hidden)
    comments.decl.leading.push_back(" Its last " + std::to_string(k.hidden) +
                                    " parameters are the scratch pointers Triton's launcher passes.");
  std::string s = printKernel(decl, &comments);
  // The launch, for a grid of %gx x %gy x %gz programs.
  std::string args;
  for (size_t i = 0; i < k.params.size() - k.hidden; ++i) args += (args.empty() ? "%" : ", %") + k.paramNames[i];
  s += "// To launch it on a grid of %gx x %gy x %gz programs:\n";
  if (k.hidden) s += "//   %programs_xy = mul %gx, %gy\n//   %programs = mul %programs_xy, %gz\n";
  for (uint32_t h = 0; h < k.hidden; ++h) {
    bool global = k.paramNames[k.params.size() - k.hidden + h] == "global_scratch";
    int64_t per = (global ? k.globalScratchSize : k.profileScratchSize) * k.numCtas;
    std::string n = global ? "global_scratch" : "profile_scratch";
    s += "//   %" + n + "_bytes = mul %programs, " + std::to_string(per) + "\n";
    s += "//   %" + n + " = alloc u8[%" + n + "_bytes]" + (global ? "" : " zero_init") + "\n";
    args += ", %" + n;
  }
  std::string grid = "%gx, %gy, %gz";
  if (k.clustered()) {
    // The grid counts CTAs: the programs times the cluster.
    grid.clear();
    const char *axis[] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) {
      std::string g = std::string("%g") + axis[i];
      if (k.cluster[i] != 1) {
        s += "//   %ctas_" + std::string(axis[i]) + " = mul " + g + ", " + std::to_string(k.cluster[i]) + "\n";
        g = "%ctas_" + std::string(axis[i]);
      }
      grid += (i ? ", " : "") + g;
    }
  }
  s += "//   launch @" + k.name + " grid(" + grid + ") block(" + std::to_string(k.blockThreads()) + ", 1, 1) smem(" +
       std::to_string(k.shared) + ") (" + args + ")\n";
  for (uint32_t h = 0; h < k.hidden; ++h) s += "//   free %" + k.paramNames[k.params.size() - k.hidden + h] + "\n";
  return s;
}

std::string tritonFusionKernel(const TritonKernel &k) {
  json params = json::array();
  for (const ParamType &p : k.params) params.push_back(toString(p));
  json j = {{"name", k.name}, {"params", params}, {"entry", k.name}};
  if (!k.image.empty()) j["image"] = k.image;
  if (k.cooperative) j["cooperative"] = true;
  if (k.clustered()) j["cluster"] = {k.cluster[0], k.cluster[1], k.cluster[2]};
  j["block"] = {k.blockThreads(), 1, 1};
  if (k.pdl) j["pdl"] = true;
  return j.dump();
}

}  // namespace hostjit
