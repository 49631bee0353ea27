// verify_buffers.cpp - the rules of buffers and views: alloc (extents,
// strides, zero-init flags), view (and whether it stays inside its root),
// free (of a buffer, once, not of an input, a view, a returned
// buffer or one a loop was handed).
#include "verifier_impl.h"

#include "hostjit/alloc_flags.h"

namespace hostjit::verify_detail {

void Verifier::check(const Alloc &n) {
  if (n.extents.size() > kMaxRank)
    error(stmt_->loc, "alloc of rank " + std::to_string(n.extents.size()) + "; the limit is 8");
  for (size_t i = 0; i < n.extents.size(); ++i) intOperand(n.extents[i], "extent " + std::to_string(i), 0);
  if (!n.strides.empty() && n.strides.size() != n.extents.size())
    error(stmt_->loc, "alloc has " + std::to_string(n.extents.size()) + " extents but " +
                          std::to_string(n.strides.size()) + " strides");
  for (size_t i = 0; i < n.strides.size(); ++i) intOperand(n.strides[i], "stride " + std::to_string(i), 0);
  if (const char *why = hj_alloc_flags_problem((n.zeroInit ? uint32_t{HJ_ALLOC_ZERO_INIT} : 0u) |
                                               (n.resetsToZero ? uint32_t{HJ_ALLOC_RESETS_TO_ZERO} : 0u)))
    error(stmt_->loc, why);
  std::vector<int64_t> sizes, strides;
  bool allKnown = true;
  for (const auto *list : {&n.extents, &n.strides})
    for (const Operand &o : *list) {
      auto v = known(o);
      allKnown = allKnown && v && *v >= 0;
      if (v) (list == &n.extents ? sizes : strides).push_back(*v);
    }
  uint64_t bytes = 0;
  if (allKnown && n.extents.size() <= kMaxRank && (n.strides.empty() || n.strides.size() == n.extents.size()) &&
      !bufferBytes(sizes, strides, dtypeBytes(n.dtype), &bytes))
    error(stmt_->loc, "alloc of " + name(n.result) + " holds more than 2^62 bytes: its size overflows");
  define(n.result);
  owned_.push_back(n.result);
  stream_[n.result.index] = currentStream();
}

void Verifier::check(const View &n) {
  if (n.extents.size() > kMaxRank)
    error(stmt_->loc, "view of rank " + std::to_string(n.extents.size()) + "; the limit is 8");
  if (!n.base.isValue() || (defined_[n.base.value.index] && !p_.value(n.base.value).isTensor)) {
    error(n.base.loc, "view expects a tensor to view");
  } else {
    use(n.base);
  }
  for (size_t i = 0; i < n.extents.size(); ++i) intOperand(n.extents[i], "extent " + std::to_string(i), 0);
  if (!n.strides.empty() && n.strides.size() != n.extents.size())
    error(stmt_->loc, "view has " + std::to_string(n.extents.size()) + " extents but " +
                          std::to_string(n.strides.size()) + " strides");
  for (size_t i = 0; i < n.strides.size(); ++i) intOperand(n.strides[i], "stride " + std::to_string(i), 0);
  intOperand(n.offset, "view offset", 0);
  define(n.result);
  checkViewBounds(n);
}

// The elements of its root a tensor spans, [first, end), when its offset
// (along its chain of views), extents and strides are constants; an empty
// tensor spans none (first == end). `overflow`: its extents and strides
// reach past 2^62 elements.
std::optional<std::pair<uint64_t, uint64_t>> Verifier::knownElements(ValueId v, bool *overflow) const {
  *overflow = false;
  int64_t offset = 0;
  for (ValueId at = v;;) {
    const Value &val = p_.value(at);
    const auto *vw = val.def == Value::Def::Stmt && val.defIndex < p_.body.size()
                         ? std::get_if<View>(&p_.body[val.defIndex].node)
                         : nullptr;
    if (!vw || !vw->base.isValue() || !defined_[vw->base.value.index]) break;
    auto o = known(vw->offset);
    if (!o || *o < 0 || __builtin_add_overflow(offset, *o, &offset)) return std::nullopt;
    at = vw->base.value;
  }
  auto knownList = [&](const std::vector<Operand> &list, std::vector<int64_t> &out) {
    for (const Operand &o : list) {
      auto x = known(o);
      if (!x || *x < 0) return false;
      out.push_back(*x);
    }
    return true;
  };
  std::vector<int64_t> sizes, strides;
  const Value &val = p_.value(v);
  const View *vw = val.def == Value::Def::Stmt && val.defIndex < p_.body.size()
                       ? std::get_if<View>(&p_.body[val.defIndex].node)
                       : nullptr;
  if (val.def == Value::Def::TensorInput) {
    for (int64_t d : val.inputDims)
      if (d == kDynamic) return std::nullopt;
    sizes = val.inputDims;
  } else if (const Alloc *al = vw ? nullptr : p_.allocOf(v)) {
    if (!knownList(al->extents, sizes) || !knownList(al->strides, strides)) return std::nullopt;
  } else if (!vw || !knownList(vw->extents, sizes) || !knownList(vw->strides, strides)) {
    return std::nullopt;
  }
  if (sizes.size() > kMaxRank || (!strides.empty() && strides.size() != sizes.size())) return std::nullopt;
  uint64_t span = 0;
  if (!bufferBytes(sizes, strides, 1, &span)) {
    *overflow = true;
    return std::nullopt;
  }
  uint64_t first = static_cast<uint64_t>(offset), end = 0;
  if (__builtin_add_overflow(first, span, &end)) return std::nullopt;
  return std::pair{first, end};
}

// Whether a view whose numbers are constants stays inside its root, when
// the root is a buffer of constant size. A parameter's memory is the
// caller's, its strides too (a slice of a larger tensor holds more than
// its extents): views of parameters are checked at each call (the plan's
// checks).
void Verifier::checkViewBounds(const View &n) {
  bool overflow = false;
  auto range = knownElements(n.result, &overflow);
  if (overflow)
    error(stmt_->loc, "view " + name(n.result) + " reaches more than 2^62 elements: its extents and strides overflow");
  if (!range || range->first == range->second) return;
  ValueId root = p_.rootOf(n.result);
  if (p_.value(root).def == Value::Def::TensorInput) return;
  auto room = knownElements(root, &overflow);
  if (!room || root == n.result) return;
  if (range->second > room->second)
    error(stmt_->loc, "view " + name(n.result) + " takes elements " + std::to_string(range->first) + " to " +
                          std::to_string(range->second - 1) + " of its root " + name(root) + ", which holds " +
                          std::to_string(room->second));
}

bool Verifier::isAllocated(ValueId v) const {
  const Value &val = p_.value(v);
  return val.isTensor && val.def == Value::Def::Stmt && val.defIndex < p_.body.size() &&
         std::holds_alternative<Alloc>(p_.body[val.defIndex].node);
}

void Verifier::check(const Free &n) {
  if (!n.tensor.isValue()) {
    error(n.tensor.loc, "free expects a buffer");
    return;
  }
  ValueId v = n.tensor.value;
  if (!defined_[v.index]) {
    error(n.tensor.loc, "use of " + name(v) + " before its definition");
    return;
  }
  if (!visible(v, n.tensor.loc)) return;
  if (!notHandle(v, n.tensor.loc)) return;
  if (!p_.value(v).isTensor) {
    error(n.tensor.loc, "free expects a buffer; " + name(v) + " is a scalar");
    return;
  }
  if (p_.value(v).def == Value::Def::TensorInput) {
    error(n.tensor.loc, "cannot free function input " + name(v) + "; inputs belong to the caller");
    return;
  }
  if (!ownsMemory(v)) {
    ValueId root = p_.rootOf(v);
    std::string hint;
    if (root != v)
      hint = p_.value(root).def == Value::Def::TensorInput
                 ? " (it views function input " + name(root) + ", which belongs to the caller)"
                 : " (free its buffer " + name(root) + " instead)";
    error(n.tensor.loc, "cannot free view " + name(v) + "; a view owns no memory" + hint);
    return;
  }
  if (freedAt_[v.index]) {
    error(n.tensor.loc, "double free of " + name(v) + " (already freed" + at(*freedAt_[v.index]) + ")");
    return;
  }
  if (handedAt_[v.index]) {
    error(n.tensor.loc, "frees " + name(v) + ", which was handed to the loop" + at(*handedAt_[v.index]) +
                            ": the loop owns it now (free the loop's result instead)");
    return;
  }
  if (const Stmt *r = returnStmt(); r)
    for (const Operand &o : std::get<Return>(r->node).values)
      if (o.isValue() && o.value == v)
        error(n.tensor.loc, "frees " + name(v) + ", which is returned" + at(r->loc) +
                                "; a returned buffer belongs to the caller");
  uint32_t here = loops_.empty() ? kTop : loops_.back();
  if (scope_[v.index] != here) {
    error(n.tensor.loc, "frees " + name(v) + " inside the loop" + at(p_.body[here].loc) +
                            ", but it was allocated outside that loop: its next iteration would free it again");
    return;
  }
  freedAt_[v.index] = stmt_->loc;
}

const Stmt *Verifier::returnStmt() {
  if (!returnSearched_) {
    returnSearched_ = true;
    for (const Stmt &s : p_.body)
      if (s.kind() == StmtKind::Return) {
        return_ = &s;
        break;
      }
  }
  return return_;
}

}  // namespace hostjit::verify_detail
