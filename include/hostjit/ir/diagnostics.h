// diagnostics.h - errors about a program, each with its location.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hostjit/ir/ir.h"

namespace hostjit {

struct Diagnostic {
  Loc loc;
  std::string message;
  std::string context;  // for built programs without locations: the statement's text
};

class Diagnostics {
 public:
  void error(Loc loc, std::string message, std::string context = {}) {
    list_.push_back({loc, std::move(message), std::move(context)});
  }
  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }
  const std::vector<Diagnostic> &list() const { return list_; }
  // Sorts by location (stable), so reports read top to bottom.
  void sort();

  // "file:line:col: error: message", the source line and a caret under the
  // column, for each diagnostic. Without a location: "file: error: message
  // (in: statement)".
  std::string format(const std::string &filename, const std::shared_ptr<const std::string> &source) const;

 private:
  std::vector<Diagnostic> list_;
};

}  // namespace hostjit
