// diagnostics.cpp - formats diagnostics with file:line:col, source line and caret.
#include "hostjit/ir/diagnostics.h"

#include <algorithm>

namespace hostjit {

void Diagnostics::sort() {
  std::stable_sort(list_.begin(), list_.end(), [](const Diagnostic &a, const Diagnostic &b) {
    if (a.loc.line != b.loc.line) return a.loc.line < b.loc.line;
    return a.loc.col < b.loc.col;
  });
}

namespace {
std::string lineOf(const std::string &src, uint32_t line) {
  size_t start = 0;
  for (uint32_t l = 1; l < line; ++l) {
    start = src.find('\n', start);
    if (start == std::string::npos) return {};
    ++start;
  }
  size_t end = src.find('\n', start);
  return src.substr(start, end == std::string::npos ? std::string::npos : end - start);
}
}  // namespace

std::string Diagnostics::format(const std::string &filename, const std::shared_ptr<const std::string> &source) const {
  std::string out;
  std::string file = filename.empty() ? "<program>" : filename;
  for (const Diagnostic &d : list_) {
    if (d.loc.known()) {
      out += file + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": error: " + d.message + "\n";
      if (source) {
        std::string text = lineOf(*source, d.loc.line);
        out += text + "\n";
        std::string caret;
        for (uint32_t i = 1; i < d.loc.col && i - 1 < text.size(); ++i) caret += text[i - 1] == '\t' ? '\t' : ' ';
        out += caret + "^\n";
      }
    } else {
      out += file + ": error: " + d.message;
      if (!d.context.empty()) out += " (in: " + d.context + ")";
      out += "\n";
    }
  }
  return out;
}

}  // namespace hostjit
