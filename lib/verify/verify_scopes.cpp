// verify_scopes.cpp - the rules of loops (carried buffers, yields, what a body
// owns) and of streams and events.
#include "verifier_impl.h"

namespace hostjit::verify_detail {

uint32_t Verifier::currentStream() const {
  if (ons_.empty()) return kTop;
  const Operand &s = std::get<On>(p_.body[ons_.back()].node).stream;
  return s.isValue() ? s.value.index : kTop;
}

void Verifier::check(const For &n) {
  intOperand(n.lo, "the loop's start", INT64_MIN);
  intOperand(n.hi, "the loop's end", INT64_MIN);
  if (n.end <= index_ || n.end >= p_.body.size() || p_.body[n.end].kind() != StmtKind::EndFor)
    error(stmt_->loc, "the loop has no closing '}'");
  uint32_t outer = loops_.empty() ? kTop : loops_.back();
  // All inits are checked before the loop takes any (a repeated one is
  // reported as such).
  std::vector<ValueId> taken;
  for (size_t k = 0; k < n.inits.size() && k < n.carried.size(); ++k)
    if (canHandOver(n, k, outer)) taken.push_back(n.inits[k].value);
  for (ValueId v : taken) handedAt_[v.index] = stmt_->loc;
  loops_.push_back(index_);
  loopYielded_.push_back(false);
  define(n.index);  // its scope is the loop
  for (size_t k = 0; k < n.carried.size(); ++k) {
    define(n.carried[k]);
    owned_.push_back(n.carried[k]);
    if (k < n.inits.size() && n.inits[k].isValue()) stream_[n.carried[k].index] = stream_[n.inits[k].value.index];
  }
}

bool Verifier::canHandOver(const For &n, size_t k, uint32_t outer) {
  const Operand &o = n.inits[k];
  std::string what = "the init of " + name(n.carried[k]);
  if (!o.isValue()) {
    error(o.loc, what + " must be a buffer");
    return false;
  }
  if (!use(o)) return false;  // defined, visible, not freed, not handed to another loop
  ValueId v = o.value;
  const Value &val = p_.value(v);
  if (!val.isTensor) {
    error(o.loc, what + " must be a buffer; " + name(v) + " is a scalar");
    return false;
  }
  if (!ownsMemory(v)) {
    error(o.loc, what + " must be a buffer the function allocated; " + name(v) + " is " +
                     (val.def == Value::Def::TensorInput ? "a function input, which belongs to the caller"
                                                         : "a view, which owns no memory"));
    return false;
  }
  for (size_t j = 0; j < k; ++j)
    if (n.inits[j].isValue() && n.inits[j].value == v) {
      error(o.loc, name(v) + " is the init of both " + name(n.carried[j]) + " and " + name(n.carried[k]) +
                       "; each carried buffer needs a buffer of its own");
      return false;
    }
  if (scope_[v.index] != outer) {
    error(o.loc, "hands " + name(v) + " to the loop, but it was allocated outside the loop" + at(p_.body[outer].loc) +
                     " around it: that loop's next iteration would hand it over again");
    return false;
  }
  return true;
}

void Verifier::check(const Yield &n) {
  if (loops_.empty()) {
    error(stmt_->loc, "'yield' outside a loop: only the body of a loop with iter(...) ends with one");
    return;
  }
  uint32_t loop = loops_.back();
  const For &f = std::get<For>(p_.body[loop].node);
  if (f.carried.empty()) {
    error(stmt_->loc, "'yield' in the loop" + at(p_.body[loop].loc) +
                          ", which has no iter(...): it carries no buffers to hand on");
    return;
  }
  if (index_ + 1 != f.end) error(stmt_->loc, "'yield' must be the last statement of the loop's body");
  loopYielded_.back() = true;
  if (n.values.size() != f.carried.size())
    error(stmt_->loc, "yields " + std::to_string(n.values.size()) + " values; the loop" + at(p_.body[loop].loc) +
                          " carries " + buffers(f.carried.size()));
  for (size_t i = 0; i < n.values.size(); ++i) yieldOne(f, loop, n, i);
}

void Verifier::yieldOne(const For &f, uint32_t loop, const Yield &n, size_t i) {
  const Operand &o = n.values[i];
  if (!o.isValue()) {
    error(o.loc, "only buffers can be yielded");
    return;
  }
  if (!use(o)) return;
  ValueId v = o.value;
  if (!p_.value(v).isTensor) {
    error(o.loc, "yields " + name(v) + ", which is a scalar; only buffers can be yielded");
    return;
  }
  if (!ownsMemory(v)) {
    error(o.loc, "yields " + name(v) + "; only buffers the loop's body owns can be yielded" +
                     (p_.value(v).def == Value::Def::TensorInput ? " (it is a function input)" : " (it is a view)"));
    return;
  }
  for (size_t j = 0; j < i; ++j)
    if (n.values[j].isValue() && n.values[j].value == v) {
      error(o.loc, name(v) + " is yielded twice");
      return;
    }
  if (scope_[v.index] != loop) {
    error(o.loc, "yields " + name(v) + ", which was allocated outside the loop" + at(p_.body[loop].loc) +
                     ": its next iteration would hand it on again");
    return;
  }
  yielded_[v.index] = true;
  if (i < f.carried.size()) sameBuffer(f.carried[i], v, o.loc);
}

void Verifier::sameBuffer(ValueId c, ValueId v, Loc loc) {
  const Value &cv = p_.value(c), &vv = p_.value(v);
  std::string as = "yields " + name(v) + " as " + name(c) + ", but ";
  if (cv.dtype != vv.dtype || cv.rank != vv.rank) {
    error(loc, as + name(v) + " is " + dtypeName(vv.dtype) + " rank " + std::to_string(vv.rank) + " and " + name(c) +
                   " is " + dtypeName(cv.dtype) + " rank " + std::to_string(cv.rank));
    return;
  }
  const Alloc *ca = p_.allocOf(c), *va = p_.allocOf(v);
  if (!ca || !va || ca->extents.size() != va->extents.size()) return;  // a bad init, reported at its loop
  for (size_t d = 0; d < ca->extents.size(); ++d) {
    if (sameSize(ca->extents[d], va->extents[d])) continue;
    const Operand &e = va->extents[d];
    bool indexed = e.isValue() && usesLoopIndex(p_.value(e.value).expr);
    error(loc, as + "its extent " + std::to_string(d) + " is " + printOperand(p_, e) +
                   (indexed ? ", which depends on a loop index," : "") + " where that of " + name(c) + " is " +
                   printOperand(p_, ca->extents[d]) + ": a carried buffer keeps the extents of its init");
    return;
  }
  bool sameStrides = ca->strides.size() == va->strides.size();
  for (size_t d = 0; sameStrides && d < ca->strides.size(); ++d) sameStrides = sameSize(ca->strides[d], va->strides[d]);
  if (!sameStrides) {
    error(loc, as + "its strides are " + stridesText(*va) + " where those of " + name(c) + " are " +
                   stridesText(*ca) + ": a carried buffer keeps the strides of its init");
    return;
  }
  if (ca->zeroInit != va->zeroInit || ca->resetsToZero != va->resetsToZero) {
    error(loc, as + name(v) + " is " + flagsText(*va) + " and " + name(c) + " is " + flagsText(*ca) +
                   ": a carried buffer keeps the flags of its init");
    return;
  }
  if (stream_[c.index] != stream_[v.index])
    error(loc, as + name(v) + " is allocated on " + streamText(stream_[v.index]) + " and " + name(c) + " on " +
                   streamText(stream_[c.index]) + ": a carried buffer stays on the stream of its init");
}

bool Verifier::sameSize(const Operand &a, const Operand &b) const {
  auto literal = [&](const Operand &o) -> std::optional<int64_t> {
    if (o.kind == Operand::Kind::Int) return o.i;
    if (o.isValue() && constant(o)) return p_.exprs[p_.value(o.value).expr].i;
    return std::nullopt;
  };
  if (auto la = literal(a), lb = literal(b); la || lb) return la == lb;
  return a.isValue() && b.isValue() && p_.value(a.value).expr.valid() &&
         p_.value(a.value).expr == p_.value(b.value).expr;
}

bool Verifier::usesLoopIndex(ExprId e) const {
  if (!e.valid()) return false;
  const Expr &x = p_.exprs[e];
  if (x.kind == Expr::Kind::LoopIndex) return true;
  bool uses = false;
  forEachOperand(x, [&](ExprId o) { uses = uses || usesLoopIndex(o); });
  return uses;
}

std::string Verifier::stridesText(const Alloc &a) const {
  if (a.strides.empty()) return "contiguous";
  std::string s = "strides[";
  for (size_t d = 0; d < a.strides.size(); ++d) s += (d ? ", " : "") + printOperand(p_, a.strides[d]);
  return s + "]";
}

std::string Verifier::flagsText(const Alloc &a) {
  if (a.resetsToZero) return "zero_init resets_to_zero";
  return a.zeroInit ? "zero_init" : "without flags";
}

std::string Verifier::streamText(uint32_t s) const {
  return s == kTop ? "the main stream" : "stream %" + p_.values[s].name;
}

void Verifier::check(const EndFor &n) {
  if (loops_.empty() || loops_.back() != n.begin) {
    error(stmt_->loc, "'}' closes no open loop");
    return;
  }
  const For &f = std::get<For>(p_.body[n.begin].node);
  std::string loop = "the loop" + at(p_.body[n.begin].loc);
  bool yielded = loopYielded_.back();
  if (!f.carried.empty() && !yielded)
    error(stmt_->loc, loop + " carries " + buffers(f.carried.size()) + " but its body does not end with 'yield'");
  for (ValueId v : owned_) {
    if (scope_[v.index] != n.begin || freedAt_[v.index] || handedAt_[v.index] || yielded_[v.index]) continue;
    if (!f.carried.empty() && !yielded) continue;  // the missing yield says it
    if (std::find(f.carried.begin(), f.carried.end(), v) != f.carried.end())
      error(p_.value(v).loc, name(v) + " is carried by " + loop +
                                 " but neither freed nor yielded in its body: each iteration must free or yield it");
    else if (f.carried.empty())
      error(p_.value(v).loc, "buffer " + name(v) + " is allocated in " + loop +
                                 " but not freed in it: each iteration must free what it allocates");
    else
      error(p_.value(v).loc, "buffer " + name(v) + " is allocated in " + loop +
                                 " but neither freed nor yielded in it: each iteration must free or yield what it "
                                 "allocates");
  }
  loops_.pop_back();
  loopYielded_.pop_back();
  for (size_t k = 0; k < f.results.size(); ++k) {
    define(f.results[k]);
    owned_.push_back(f.results[k]);
    if (k < f.carried.size()) stream_[f.results[k].index] = stream_[f.carried[k].index];
  }
}

void Verifier::check(const StreamDef &n) {
  if (++streams_ == kMaxStreams)
    error(stmt_->loc, "more than " + std::to_string(kMaxStreams - 1) + " streams in one program");
  define(n.result);
}

void Verifier::check(const On &n) {
  handleOperand(n.stream, Value::Handle::Stream, "on");
  if (n.end <= index_ || n.end >= p_.body.size() || p_.body[n.end].kind() != StmtKind::EndOn)
    error(stmt_->loc, "the 'on' block has no closing '}'");
  ons_.push_back(index_);
}

void Verifier::check(const EndOn &n) {
  if (ons_.empty() || ons_.back() != n.begin) {
    error(stmt_->loc, "'}' closes no open 'on' block");
    return;
  }
  ons_.pop_back();
}

void Verifier::check(const Record &n) {
  if (++events_ == kMaxEvents + 1) error(stmt_->loc, "more than " + std::to_string(kMaxEvents) + " events in one program");
  define(n.result);
}

}  // namespace hostjit::verify_detail
