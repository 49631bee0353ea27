// inductor_rewrite.cpp - addmm's whole-matrix bias made the matmul's own C.
#include "inductor_rewrite.h"

#include <map>
#include <string>

namespace hostjit {

namespace {

using nlohmann::json;

bool isName(const json &j) { return j.is_string(); }

// The tensor names a step reads or writes (its views' bases too).
template <typename F>
void forEachUse(json &step, F &&f) {
  for (const char *key : {"args", "inputs"})
    if (step.contains(key) && step[key].is_array())
      for (json &a : step[key])
        if (isName(a)) f(a);
  for (const char *key : {"out", "of"})
    if (step.contains(key) && isName(step[key])) f(step[key]);
}

std::string op(const json &step) {
  return step.is_object() && step.contains("op") && step["op"].is_string() ? step["op"].get<std::string>() : "";
}

// The root buffer of every name made by an alloc or a view of one.
std::map<std::string, std::string> roots(const json &body, const std::set<size_t> &dropped) {
  std::map<std::string, std::string> r;
  for (size_t i = 0; i < body.size(); ++i) {
    const json &s = body[i];
    if (dropped.count(i)) continue;
    if (!s.contains("name") || !isName(s["name"])) continue;
    std::string name = s["name"].get<std::string>();
    if (op(s) == "alloc") r[name] = name;
    else if (op(s) == "view" && s.contains("of") && isName(s["of"]))
      if (auto it = r.find(s["of"].get<std::string>()); it != r.end()) r[name] = it->second;
  }
  return r;
}

bool usedIn(json &body, json &outputs, size_t from, size_t to, const std::string &root,
            const std::map<std::string, std::string> &rootOf) {
  bool used = false;
  auto check = [&](json &name) {
    auto it = rootOf.find(name.get<std::string>());
    used |= it != rootOf.end() && it->second == root;
  };
  for (size_t i = from; i < to && i < body.size(); ++i) forEachUse(body[i], check);
  if (to > body.size())
    for (json &o : outputs)
      if (isName(o)) check(o);
  return used;
}

}  // namespace

std::set<size_t> accumulateBiasInPlace(json &body, json &outputs) {
  std::set<size_t> dropped;
  if (!body.is_array() || !outputs.is_array()) return dropped;
  for (size_t i = 0; i < body.size(); ++i) {
    json &s = body[i];
    if (op(s) != "extern" || !s.contains("kernel") || !s["kernel"].is_string()) continue;
    std::string kernel = s["kernel"].get<std::string>();
    if (kernel != "addmm" && kernel != "baddbmm") continue;
    if (!s.contains("inputs") || !s["inputs"].is_array() || s["inputs"].size() != 3 || !isName(s["inputs"][0]) ||
        !s.contains("out") || !isName(s["out"]))
      continue;
    std::string bias = s["inputs"][0].get<std::string>(), out = s["out"].get<std::string>();
    if (bias == out) continue;
    // Both plain allocs of one shape and dtype.
    size_t biasAt = body.size(), outAt = body.size();
    for (size_t k = 0; k < i; ++k) {
      if (op(body[k]) != "alloc" || !body[k].contains("name") || dropped.count(k)) continue;
      if (body[k]["name"] == bias) biasAt = k;
      if (body[k]["name"] == out) outAt = k;
    }
    if (biasAt == body.size() || outAt == body.size()) continue;
    const json &b = body[biasAt], &o = body[outAt];
    if (b.value("dtype", json()) != o.value("dtype", json()) || b.value("sizes", json()) != o.value("sizes", json()) ||
        b.value("strides", json()) != o.value("strides", json()))
      continue;
    std::map<std::string, std::string> rootOf = roots(body, dropped);
    // The bias dies here; the out is not touched before.
    if (usedIn(body, outputs, i + 1, body.size() + 1, bias, rootOf)) continue;
    if (usedIn(body, outputs, outAt + 1, i, out, rootOf)) continue;
    for (size_t k = i + 1; k < body.size(); ++k)
      forEachUse(body[k], [&](json &name) {
        if (name == out) name = bias;
      });
    for (json &name : outputs)
      if (name == out) name = bias;
    s["out"] = bias;
    dropped.insert(outAt);
  }
  return dropped;
}

}  // namespace hostjit
