// json_text.cpp - JSON text parsed with bounded nesting and located errors
// (contract in json_text.h).
#include "json_text.h"

#include <cstdio>

#include "hostjit/runtime.h"

namespace hostjit {

namespace {

using json = nlohmann::json;

// Thrown by the parser at an array or object past kMaxJsonDepth.
struct TooDeep {};

// The DOM parser of nlohmann, but for two things: it makes a float of an
// integer literal too large for 64 bits (99999999999999999999), which a
// size field would then report as a float literal (such a literal stays an
// integer here, UINT64_MAX, which every field refuses as not fitting i64);
// and it stops at the first array or object nested too deep, so nothing
// recurses past kMaxJsonDepth levels afterwards.
class Dom : public nlohmann::json_sax<json> {
 public:
  explicit Dom(json &root) : dom_(root) {}
  bool null() override { return dom_.null(); }
  bool boolean(bool v) override { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t &raw) override {
    if (raw.find_first_of(".eE") == string_t::npos) return dom_.number_unsigned(UINT64_MAX);
    return dom_.number_float(v, raw);
  }
  bool string(string_t &v) override { return dom_.string(v); }
  bool binary(binary_t &v) override { return dom_.binary(v); }
  bool start_object(std::size_t n) override { return deeper() && dom_.start_object(n); }
  bool key(string_t &v) override { return dom_.key(v); }
  bool end_object() override { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) override { return deeper() && dom_.start_array(n); }
  bool end_array() override { return --depth_, dom_.end_array(); }
  // Rethrown as the exception it is, as json::parse throws it.
  bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &e) override {
    if (const auto *p = dynamic_cast<const json::parse_error *>(&e)) throw *p;
    if (const auto *r = dynamic_cast<const json::out_of_range *>(&e)) throw *r;
    throw e;
  }

 private:
  bool deeper() {
    if (++depth_ > kMaxJsonDepth) throw TooDeep{};
    return true;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  size_t depth_ = 0;
};

// A message of nlohmann's without its "[json.exception...] " prefix.
std::string plain(const char *what) {
  std::string m = what;
  if (auto k = m.find("] "); k != std::string::npos) m = m.substr(k + 2);
  return m;
}

}  // namespace

Expected<json> parseJsonText(std::string_view text, const std::string &filename) {
  std::string prefix = filename.empty() ? std::string() : filename + ": ";
  json j;
  try {
    Dom dom(j);
    json::sax_parse(text, &dom);
  } catch (const TooDeep &) {
    return Error{HJ_ERR_INVALID_ARGUMENT, prefix + "not valid JSON here: arrays and objects nested more than " +
                                              std::to_string(kMaxJsonDepth) + " deep"};
  } catch (const json::parse_error &e) {
    // "parse error at line 3, column 5: why" becomes "file:3:5: not valid
    // JSON: why".
    std::string m = plain(e.what()), where;
    unsigned line = 0, col = 0;
    if (auto k = m.find(" at line "); k != std::string::npos &&
                                      std::sscanf(m.c_str() + k, " at line %u, column %u", &line, &col) == 2) {
      where = filename + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
      if (auto c = m.find(": ", k); c != std::string::npos) m = m.substr(c + 2);
    }
    if (m.size() > 200) m = m.substr(0, 200) + "...";
    return Error{HJ_ERR_INVALID_ARGUMENT, (where.empty() ? prefix : where) + "not valid JSON: " + m};
  } catch (const json::exception &e) {  // a number too large for any type (out_of_range.406), ...
    std::string m = plain(e.what());
    if (m.size() > 200) m = m.substr(0, 200) + "...";
    return Error{HJ_ERR_INVALID_ARGUMENT, prefix + "not valid JSON: " + m};
  }
  return j;
}

std::string jsonQuote(const json &j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() <= 80 ? s : s.substr(0, 77) + "...";
}

}  // namespace hostjit
