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

// Bytes that would move the cursor, change colours or are not ASCII are
// never written to the terminal: in messages they become \xNN, in the
// echoed source line '?' (one column each, so the caret stays in place).
std::string printable(const std::string &s, bool escape) {
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 0x20 && c < 0x7f) || c == '\t') {
      out += static_cast<char>(c);
    } else if (escape) {
      static const char *hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += '?';
    }
  }
  return out;
}

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
  // A file of garbage makes an error per byte: the first ones say enough.
  constexpr size_t kShown = 20;
  std::string out;
  std::string file = printable(filename.empty() ? "<program>" : filename, true);
  for (size_t k = 0; k < list_.size() && k < kShown; ++k) {
    const Diagnostic &d = list_[k];
    std::string message = printable(d.message, true);
    if (d.loc.known()) {
      out += file + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": error: " + message + "\n";
      if (source) {
        std::string text = printable(lineOf(*source, d.loc.line), false);
        if (text.size() > 200 && d.loc.col < 200) text = text.substr(0, 200) + "...";
        out += text + "\n";
        std::string caret;
        for (uint32_t i = 1; i < d.loc.col && i - 1 < text.size(); ++i) caret += text[i - 1] == '\t' ? '\t' : ' ';
        out += caret + "^\n";
      }
    } else {
      out += file + ": error: " + message;
      if (!d.context.empty()) out += " (in: " + printable(d.context, true) + ")";
      out += "\n";
    }
  }
  if (list_.size() > kShown) out += file + ": " + std::to_string(list_.size() - kShown) + " more errors not shown\n";
  return out;
}

}  // namespace hostjit
