// verifier.cpp - checks every Host IR rule and reports each problem once: the
// walk, names and scopes, operands, signatures and leaks.
#include "verifier_impl.h"

namespace hostjit::verify_detail {

Diagnostics Verifier::run() {
  checkKernels();
  checkSignature();
  for (size_t i = 0; i < p_.body.size(); ++i) {
    stmt_ = &p_.body[i];
    index_ = static_cast<uint32_t>(i);
    std::visit([&](const auto &n) { check(n); }, p_.body[i].node);
  }
  stmt_ = nullptr;
  for (uint32_t open : loops_) error(p_.body[open].loc, "the loop" + at(p_.body[open].loc) + " is not closed");
  for (uint32_t open : ons_) error(p_.body[open].loc, "the 'on' block" + at(p_.body[open].loc) + " is not closed");
  if (p_.body.empty() || p_.body.back().kind() != StmtKind::Return)
    error(p_.body.empty() ? p_.funcLoc : p_.body.back().loc, "function @" + p_.funcName + " must end with 'return'");
  checkLeaks();
  d_.sort();
  return std::move(d_);
}

void Verifier::error(Loc loc, std::string msg) {
  if (!loc.known() && stmt_) loc = stmt_->loc;
  d_.error(loc, std::move(msg), stmt_ && !stmt_->loc.known() ? printStmt(p_, *stmt_) : std::string());
}

void Verifier::checkKernels() {
  std::unordered_map<std::string, Loc> seen;
  for (const Kernel &k : p_.kernels) {
    if (!seen.emplace(k.name, k.loc).second)
      d_.error(k.loc, std::string("redefinition of ") + (k.custom ? "custom call @" : "kernel @") + k.name);
    if (k.custom) {
      checkCustom(k);
      continue;
    }
    if (k.cuda && !k.entry) d_.error(k.loc, "kernel @" + k.name + " gives 'cuda' without 'entry'");
    if (k.image && !k.entry) d_.error(k.loc, "kernel @" + k.name + " gives 'image' without 'entry'");
    if (k.entry && !k.cuda && !k.image) d_.error(k.loc, "kernel @" + k.name + " gives 'entry' without 'cuda' or 'image'");
    if (k.cuda && k.image)
      d_.error(k.loc, "kernel @" + k.name + " gives both 'cuda' and 'image'; a kernel has one CUDA implementation");
    if (k.image && k.nvrtcOptions)
      d_.error(k.loc, "kernel @" + k.name + " gives 'nvrtc_options' with 'image'; an image is compiled already");
    if (!k.cuda && !k.image && !k.host)
      d_.error(k.loc, "kernel @" + k.name + " has no implementation: give 'host' and/or 'cuda' or 'image' with 'entry'");
    if (k.cluster) {
      const auto &c = *k.cluster;
      bool positive = c[0] >= 1 && c[1] >= 1 && c[2] >= 1;
      if (!positive || c[0] * c[1] * c[2] > HJ_MAX_CLUSTER_BLOCKS)
        d_.error(k.clusterLoc.known() ? k.clusterLoc : k.loc, "kernel @" + k.name + ": cluster(" + std::to_string(c[0]) + ", " + std::to_string(c[1]) +
                            ", " + std::to_string(c[2]) + ") is not a cluster: each dim must be at least 1, and "
                            "the blocks 1 to " + std::to_string(HJ_MAX_CLUSTER_BLOCKS) + " in all");
    }
    if (k.block) {
      const auto &b = *k.block;
      bool positive = b[0] >= 1 && b[1] >= 1 && b[2] >= 1;
      if (!positive || b[0] > HJ_MAX_BLOCK_THREADS || b[1] > HJ_MAX_BLOCK_THREADS || b[2] > HJ_MAX_BLOCK_THREADS ||
          b[0] * b[1] * b[2] > HJ_MAX_BLOCK_THREADS)
        d_.error(k.blockLoc.known() ? k.blockLoc : k.loc,
                 "kernel @" + k.name + ": block(" + std::to_string(b[0]) + ", " + std::to_string(b[1]) + ", " +
                     std::to_string(b[2]) + ") is not a block: each dim must be at least 1, and the threads 1 to " +
                     std::to_string(HJ_MAX_BLOCK_THREADS) + " in all");
    }
    if (k.boundsChecked && (k.cooperative || k.cluster))
      d_.error(k.loc, "kernel @" + k.name + " is bounds_checked and " + (k.cooperative ? "cooperative" : "clustered") +
                          "; graph mode rounds up the grid of a bounds_checked kernel, which " +
                          (k.cooperative ? "a cooperative grid's co-residency" : "a cluster's multiple of blocks") +
                          " does not allow");
    for (const ParamType &pt : k.params)
      if (!pt.isTensor() && !isScalarType(pt.dtype))
        d_.error(k.loc, "kernel @" + k.name + ": parameter type " + toString(pt) + " is not a scalar type");
  }
}

void Verifier::checkCustom(const Kernel &k) {
  if (!k.symbol || k.symbol->empty())
    d_.error(k.loc, "custom call @" + k.name + " has no symbol (the name of its extern \"C\" function)");
  if (k.library && k.library->empty()) d_.error(k.loc, "custom call @" + k.name + ": library is empty");
  if (k.cuda || k.entry || k.host || k.image || k.nvrtcOptions || k.cooperative || k.pdl || k.cluster || k.block ||
      k.boundsChecked)
    d_.error(k.loc, "custom call @" + k.name + " has kernel attributes; a custom call takes symbol, library and capturable");
  for (const ParamType &pt : k.params)
    if (!pt.isTensor() && !isScalarType(pt.dtype))
      d_.error(k.loc, "custom call @" + k.name + ": parameter type " + toString(pt) + " is not a scalar type");
}

void Verifier::checkSignature() {
  for (ValueId v : p_.params) {
    define(v);
    const Value &val = p_.value(v);
    if (val.isTensor && val.rank > kMaxRank)
      d_.error(val.loc, name(v) + " has rank " + std::to_string(val.rank) + "; the limit is 8");
    if (!val.isTensor && !isScalarType(val.dtype))
      d_.error(val.loc, name(v) + ": " + dtypeName(val.dtype) + " is not a scalar type");
  }
}

void Verifier::define(ValueId v) {
  const Value &val = p_.value(v);
  auto [it, fresh] = names_.emplace(val.name, v);
  if (!fresh) {
    Loc first = p_.value(it->second).loc;
    std::string where = first.known() ? " (first defined at line " + std::to_string(first.line) + ":" +
                                            std::to_string(first.col) + ")"
                                      : "";
    error(val.loc, "redefinition of %" + val.name + where);
  }
  defined_[v.index] = true;
  scope_[v.index] = loops_.empty() ? kTop : loops_.back();
}

bool Verifier::notHandle(ValueId v, Loc loc) {
  Value::Handle h = p_.value(v).handle;
  if (h == Value::Handle::None) return true;
  error(loc, name(v) + " is " + handleName(h) + "; only 'on' takes a stream and only 'wait' an event");
  return false;
}

bool Verifier::handleOperand(const Operand &o, Value::Handle want, const char *stmt) {
  if (!o.isValue()) {
    error(o.loc, std::string("'") + stmt + "' expects " + (want == Value::Handle::Stream ? "a stream" : "an event") +
                     " value");
    return false;
  }
  if (!defined_[o.value.index]) {
    error(o.loc, "use of " + name(o.value) + " before its definition");
    return false;
  }
  if (!visible(o.value, o.loc)) return false;
  if (p_.value(o.value).handle != want) {
    error(o.loc, std::string("'") + stmt + "' expects " + (want == Value::Handle::Stream ? "a stream" : "an event") +
                     "; " + name(o.value) + " is " +
                     (p_.value(o.value).handle == Value::Handle::None ? std::string("not one")
                                                                        : std::string(handleName(p_.value(o.value).handle))));
    return false;
  }
  return true;
}

bool Verifier::visible(ValueId v, Loc loc) {
  uint32_t s = scope_[v.index];
  if (s == kTop || std::find(loops_.begin(), loops_.end(), s) != loops_.end()) return true;
  error(loc, "use of " + name(v) + " outside the loop" + at(p_.body[s].loc) + " that defines it");
  return false;
}

bool Verifier::use(const Operand &o, bool metadataOnly) {
  if (!o.isValue()) return true;
  if (!defined_[o.value.index]) {
    error(o.loc, "use of " + name(o.value) + " before its definition");
    return false;
  }
  if (!visible(o.value, o.loc)) return false;
  if (!notHandle(o.value, o.loc)) return false;
  if (!metadataOnly && freedAt_[o.value.index]) {
    error(o.loc, "use of " + name(o.value) + " after it was freed" + at(*freedAt_[o.value.index]));
    return false;
  }
  if (!metadataOnly && handedAt_[o.value.index]) {
    error(o.loc, "use of " + name(o.value) + " after it was handed to the loop" + at(*handedAt_[o.value.index]));
    return false;
  }
  ValueId root = p_.rootOf(o.value);
  if (!metadataOnly && root != o.value && freedAt_[root.index]) {
    error(o.loc, "use of view " + name(o.value) + " after its buffer " + name(root) + " was freed" +
                     at(*freedAt_[root.index]));
    return false;
  }
  if (!metadataOnly && root != o.value && handedAt_[root.index]) {
    error(o.loc, "use of view " + name(o.value) + " after its buffer " + name(root) + " was handed to the loop" +
                     at(*handedAt_[root.index]));
    return false;
  }
  return true;
}

void Verifier::intOperand(const Operand &o, const std::string &what, int64_t minValue, int64_t maxValue) {
  if (!use(o)) return;
  auto range = [&](int64_t v) {
    if (v < minValue) error(o.loc, what + " must be >= " + std::to_string(minValue) + ", got " + std::to_string(v));
    else if (v > maxValue) error(o.loc, what + " must be <= " + std::to_string(maxValue) + ", got " + std::to_string(v));
  };
  switch (o.kind) {
    case Operand::Kind::Int: range(o.i); return;
    case Operand::Kind::Float: error(o.loc, what + " must be an integer, not a float literal"); return;
    case Operand::Kind::Value: {
      const Value &v = p_.value(o.value);
      if (v.isTensor) error(o.loc, what + " must be an i64 scalar; " + name(o.value) + " is a tensor");
      else if (v.dtype != DType::i64)
        error(o.loc, what + " must be an i64 scalar; " + name(o.value) + " is " + dtypeName(v.dtype));
      else if (constant(o)) range(value(o));
      return;
    }
  }
}

void Verifier::checkLeaks() {
  for (ValueId v : owned_) {
    if (freedAt_[v.index] || handedAt_[v.index] || scope_[v.index] != kTop) continue;  // a loop's buffers: reported at its end
    bool returned = false;
    for (ValueId r : returned_) returned |= r == v;
    if (!returned) {
      stmt_ = &p_.body[p_.value(v).defIndex];
      error(p_.value(v).loc, "buffer " + name(v) + " is neither freed nor returned (leak)");
    }
  }
  stmt_ = nullptr;
}

}  // namespace hostjit::verify_detail

namespace hostjit {

using verify_detail::Verifier;

Diagnostics verify(const Program &p) { return Verifier(p).run(); }

}  // namespace hostjit
