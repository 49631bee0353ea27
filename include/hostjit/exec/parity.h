// parity.h - compares two runs of one program: the runtime records line by
// line and the outputs bit for bit, and describes the first difference.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hostjit/exec/runtime_handles.h"

namespace hostjit {

// nullopt when equal; else "record line 4: eval: ... / jit: ...". Lines of
// the zeroed arena's growth ("memset #0 %arena ...") are not compared: they
// say what memory the context already held, not what the program called.
std::optional<std::string> compareRecords(const std::vector<std::string> &a, const std::vector<std::string> &b,
                                          const char *nameA = "eval", const char *nameB = "jit");
// nullopt when outputs have the same dtypes, shapes, strides and bytes.
std::optional<std::string> compareOutputs(const std::vector<Tensor> &a, const std::vector<Tensor> &b);

}  // namespace hostjit
