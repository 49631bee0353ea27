// plan_fingerprint.cpp - planFingerprint: every field the generated code
// depends on, walked through the plan's field lists (HOSTJIT_FIELDS).
#include <type_traits>

#include "hostjit/exec/plan.h"

namespace hostjit {

namespace {

template <class T>
concept HasFields = requires(const T &t) { t.forEachField([](const char *, const auto &) {}); };

class Writer {
 public:
  std::string out;

  template <class T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void put(const T &v) {
    out.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  void put(const std::string &s) {
    put(static_cast<uint64_t>(s.size()));
    out += s;
  }
  void put(const ExprId &r) { put(r.index); }
  void put(const ExprRef &r) { put(r.index); }
  void put(const SlotRef &r) { put(r.index); }
  void put(const InputRef &r) { put(r.index); }
  void put(const KernelRef &r) { put(r.index); }
  void put(const LoopRef &r) { put(r.index); }
  void put(const OffsetRef &r) { put(r.index); }
  void put(const AllocFlags &f) { put(f.bits); }
  void put(const ParamKind &k) { put(k.value); }
  template <class T>
  void put(const std::vector<T> &v) {
    put(static_cast<uint64_t>(v.size()));
    for (const T &x : v) put(x);
  }
  template <class T, size_t N>
  void put(const std::array<T, N> &a) {
    for (const T &x : a) put(x);
  }
  template <class... T>
  void put(const std::variant<T...> &v) {
    put(static_cast<uint8_t>(v.index()));
    std::visit([&](const auto &x) { put(x); }, v);
  }
  void put(const std::monostate &) {}
  template <class T>
    requires HasFields<T>
  void put(const T &record) {
    record.forEachField([&](const char *, const auto &field) { put(field); });
  }
};

}  // namespace

std::string planFingerprint(const Plan &plan) {
  Writer w;
  w.put(plan);
  return std::move(w.out);
}

}  // namespace hostjit
