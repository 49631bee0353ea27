// json_text.h - JSON files as the fusion and Triton readers take them:
// bounded nesting, located errors, short quotes of values in messages.
#pragma once

#include <string>
#include <string_view>

#include "hostjit/ir/error.h"
#include "nlohmann/json.hpp"

namespace hostjit {

// The deepest nesting of arrays and objects a JSON file may have: deeper
// files are refused before anything recurses over them.
inline constexpr size_t kMaxJsonDepth = 64;

// Parses JSON text of file `filename` (empty: no file). An integer literal
// too large for 64 bits stays an integer (UINT64_MAX), which every size
// field refuses as not fitting i64, instead of becoming a float. Errors:
// "FILE:LINE:COL: not valid JSON: why", or nesting deeper than kMaxJsonDepth.
Expected<nlohmann::json> parseJsonText(std::string_view text, const std::string &filename);

// A value as JSON text for an error message, cut to about 80 characters.
std::string jsonQuote(const nlohmann::json &j);

}  // namespace hostjit
