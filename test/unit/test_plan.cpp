// test_plan.cpp - the typed Plan: a sample plan with every step kind, whose
// fingerprint changes when any field anywhere in it changes.
#include <set>
#include <type_traits>

#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

// Every step kind: allocations, a launch with a tensor struct, values and
// a view at an offset, a loop that carries a buffer, streams and events,
// collectives and a group, a matmul with every option, and an output whose
// static dim is checked at run time.
const char *kSample = R"(kernel @k(ptr<f32>, tensor<f32, 1>, i64, f32) {
  host = "k"
}

custom @c(tensor<f32, 2>, f32) {
  symbol = "c"
}

func @main(%x: f32[?], %alpha: f32) -> (f32[4], f32[?]) {
  %n = size %x, 0
  %blocks = ceildiv %n, 128
  %rank = rank
  %y = alloc f32[%n]
  %w = alloc f32[%blocks] zero_init resets_to_zero
  %xs = view %x[%blocks] offset 1
  launch @k grid(%blocks, 1, 1) block(128, 1, 1) smem(64) (%xs, %w, %n, %alpha)
  %r = for %i = 0 to %n iter(%c = %y) {
    %next = alloc f32[%n]
    launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (%c, %next, %i, %alpha)
    free %c
    yield %next
  }
  %s = stream
  %e = record
  on %s {
    wait %e
    launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (%r, %w, %n, %alpha)
    %f = record
    sync
  }
  %sum = alloc f32[%n]
  all_reduce sum %r, %sum
  %peer = add %rank, 1
  send %sum, %peer
  recv %r, %peer
  %ma = alloc f32[4, %n]
  %mb = alloc f32[4]
  %ws = alloc u8[256]
  %mc = alloc f32[4, 4]
  %mas = view %ma[4, %n] offset %rank
  matmul %mas, %ma, %mc transpose_b alpha 0.5 beta 0.25 bias %mb workspace %ws
  %mcs = view %mc[2, 4] offset 8
  call @c(%mcs, %alpha)
  free %ma
  free %mb
  free %ws
  free %mc
  free %w
  free %r
  %out = alloc f32[%n]
  return %out, %sum
}
)";

template <class T>
constexpr bool isVector = false;
template <class T>
constexpr bool isVector<std::vector<T>> = true;
template <class T>
constexpr bool isArray = false;
template <class T, size_t N>
constexpr bool isArray<std::array<T, N>> = true;
template <class T>
constexpr bool isVariant = false;
template <class... T>
constexpr bool isVariant<std::variant<T...>> = true;

// Makes variant v hold its alternative `index`, default-constructed.
template <class V, size_t... I>
void emplaceIndex(V &v, size_t index, std::index_sequence<I...>) {
  ((index == I ? (void)v.template emplace<I>() : (void)0), ...);
}

// Walks every field of a plan, depth first, in field order, counting what
// it can change ("leaves": every value, and every list and variant as a
// whole); changes leaf number `target` (when it is reached) and records the
// path of that leaf.
class Mutator {
 public:
  explicit Mutator(size_t target) : target_(target) {}

  size_t seen() const { return n_; }
  const std::string &path() const { return path_; }

  template <class T>
  void walk(T &v, const std::string &at) {
    if constexpr (std::is_same_v<T, bool>) {
      if (hit(at)) v = !v;
    } else if constexpr (std::is_enum_v<T>) {
      // The neighbouring enumerator (every enum here has an even count).
      if (hit(at)) v = static_cast<T>(static_cast<std::underlying_type_t<T>>(v) ^ 1);
    } else if constexpr (std::is_arithmetic_v<T>) {
      if (hit(at)) v = static_cast<T>(v + 1);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (hit(at)) v += "x";
    } else if constexpr (std::is_same_v<T, ExprRef> || std::is_same_v<T, SlotRef> || std::is_same_v<T, InputRef> ||
                         std::is_same_v<T, KernelRef> || std::is_same_v<T, LoopRef> || std::is_same_v<T, ExprId> ||
                         std::is_same_v<T, OffsetRef>) {
      if (hit(at)) v.index = v.index + 1;
    } else if constexpr (std::is_same_v<T, AllocFlags>) {
      if (hit(at)) v.bits ^= HJ_ALLOC_OUTPUT;
    } else if constexpr (std::is_same_v<T, ParamKind>) {
      if (hit(at)) v.value = v.value == HJ_PARAM_I64 ? HJ_PARAM_I32 : HJ_PARAM_I64;
    } else if constexpr (isVector<T>) {
      if (hit(at + ".size")) {
        v.emplace_back();
        return;
      }
      for (size_t i = 0; i < v.size(); ++i) walk(v[i], at + "[" + std::to_string(i) + "]");
    } else if constexpr (isArray<T>) {
      for (size_t i = 0; i < v.size(); ++i) walk(v[i], at + "[" + std::to_string(i) + "]");
    } else if constexpr (isVariant<T>) {
      if (hit(at + "#alternative")) {
        emplaceIndex(v, (v.index() + 1) % std::variant_size_v<T>, std::make_index_sequence<std::variant_size_v<T>>());
        return;
      }
      std::visit([&](auto &x) { walk(x, at); }, v);
    } else if constexpr (std::is_same_v<T, std::monostate>) {
    } else {
      v.forEachField([&](const char *name, auto &field) { walk(field, at + "." + name); });
    }
  }

 private:
  bool hit(const std::string &at) {
    bool now = n_++ == target_;
    if (now) path_ = at;
    return now;
  }
  size_t target_;
  size_t n_ = 0;
  std::string path_;
};

}  // namespace

TEST_CASE("plan: the sample holds every step kind", "[plan]") {
  auto plan = makePlan(parseOk(kSample));
  INFO((plan ? "" : plan.error().message));
  REQUIRE(plan);
  std::set<size_t> kinds;
  for (const Step &s : plan->steps) kinds.insert(s.index());
  CHECK(kinds.size() == std::variant_size_v<Step> - 1);  // all but monostate
  CHECK(!plan->checks.empty());
  CHECK(!plan->loops.empty());
}

TEST_CASE("plan: changing any field of the plan changes its fingerprint", "[plan]") {
  auto plan = makePlan(parseOk(kSample));
  REQUIRE(plan);
  const std::string base = planFingerprint(*plan);
  const std::string text = printPlan(*plan);
  Mutator count(SIZE_MAX);
  Plan copy = *plan;
  count.walk(copy, "plan");
  size_t leaves = count.seen();
  INFO(leaves << " leaves");
  REQUIRE(leaves > 300);
  std::set<std::string> stepFields;
  for (size_t k = 0; k < leaves; ++k) {
    Plan changed = *plan;
    Mutator m(k);
    m.walk(changed, "plan");
    INFO("changed " << m.path());
    REQUIRE(!m.path().empty());
    CHECK(planFingerprint(changed) != base);
    // The printer walks the same lists: every change of a step shows.
    if (m.path().rfind("plan.steps[", 0) == 0) {
      CHECK(printPlan(changed) != text);
      stepFields.insert(m.path().substr(m.path().find(']') + 1));
    }
  }
  // Each step kind's every field was changed at least once.
  Plan empty;
  for (size_t i = 0; i + 1 < std::variant_size_v<Step>; ++i) {
    Step s;
    emplaceIndex(s, i, std::make_index_sequence<std::variant_size_v<Step>>());
    std::visit(
        [&](const auto &x) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, std::monostate>)
            x.forEachField([&](const char *name, const auto &) {
              bool found = false;
              for (const std::string &f : stepFields) found |= f.rfind(std::string(".") + name, 0) == 0;
              INFO("step " << stepKeyword(i) << " field " << name);
              CHECK(found);
            });
        },
        s);
  }
}

TEST_CASE("plan: the kept expressions of makePlan are computed", "[plan]") {
  Program p = parseOk(kSample);
  ExprId blocks = p.value(ValueId{3}).expr;  // %blocks
  REQUIRE(p.value(ValueId{3}).name == "blocks");
  auto plan = makePlan(p, std::vector<ExprId>{blocks});
  REQUIRE(plan);
  REQUIRE(plan->kept.size() == 1);
  CHECK(plan->exprs[plan->kept[0].index].op == OpCode::CeilDiv);
}
