// inductor_rewrite.h - rewrites of an Inductor description's body made
// before it is imported, where the wrapper's form has no Host IR statement.
#pragma once

#include <set>

#include <nlohmann/json.hpp>

namespace hostjit {

// addmm/baddbmm whose bias is a whole matrix (not one row): when the bias is
// a buffer of the out's sizes, strides and dtype that nothing reads after
// the call, and the out is a buffer not used before it, the call writes the
// bias buffer instead (C = alpha·A·B + beta·C accumulates onto it) and every
// later use of the out names the bias buffer. Body and outputs are changed
// in place, steps keeping their indices (messages name them); returns the
// indices of the outs' allocs, which the importer skips. Steps the rule does
// not match are left for the importer to judge, malformed ones too.
std::set<size_t> accumulateBiasInPlace(nlohmann::json &body, nlohmann::json &outputs);

}  // namespace hostjit
