// lexer.cpp - splits .hir text into tokens and attaches comments to them.
#include "lexer.h"

#include <cmath>

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace hostjit {

namespace {
bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
}  // namespace

std::vector<Token> lex(std::string_view s, Diagnostics &diags, std::vector<std::string> &tail) {
  std::vector<Token> out;
  std::vector<std::string> pending;
  uint32_t line = 1, col = 1;
  size_t i = 0;
  bool tokenOnLine = false;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < s.size(); ++k, ++i) {
      if (s[i] == '\n') {
        ++line;
        col = 1;
        tokenOnLine = false;
      } else {
        ++col;
      }
    }
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance(1);
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      size_t end = s.find('\n', i);
      if (end == std::string_view::npos) end = s.size();
      std::string text(s.substr(i + 2, end - i - 2));
      while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
      if (tokenOnLine && !out.empty() && out.back().loc.line == line) out.back().trailingComment = text;
      else pending.push_back(text);
      advance(end - i);
      continue;
    }
    Token t;
    t.loc = {line, col};
    size_t start = i;
    if (c == '%' || c == '@') {
      size_t j = i + 1;
      while (j < s.size() && identChar(s[j])) ++j;
      if (j == i + 1) {
        diags.error(t.loc, std::string("expected a name after '") + c + "'");
        advance(1);
        continue;
      }
      t.kind = c == '%' ? Tok::Percent : Tok::At;
      t.text = std::string(s.substr(i + 1, j - i - 1));
      advance(j - i);
    } else if (identStart(c)) {
      size_t j = i;
      while (j < s.size() && identChar(s[j])) ++j;
      t.kind = Tok::Ident;
      t.text = std::string(s.substr(i, j - i));
      advance(j - i);
    } else if (s.substr(i, 4) == "-inf" && (i + 4 >= s.size() || !identChar(s[i + 4]))) {
      // The printer writes negative infinity as -inf.
      t.kind = Tok::Float;
      t.f = -HUGE_VAL;
      t.text = "-inf";
      advance(4);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '-' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i + 1;
      bool isFloat = false;
      while (j < s.size()) {
        char d = s[j];
        if (std::isdigit(static_cast<unsigned char>(d))) ++j;
        else if (d == '.' || d == 'e' || d == 'E') {
          isFloat = true;
          ++j;
          if ((d == 'e' || d == 'E') && j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
        } else break;
      }
      std::string num(s.substr(i, j - i));
      errno = 0;
      char *end = nullptr;
      if (isFloat) {
        t.kind = Tok::Float;
        t.f = std::strtod(num.c_str(), &end);
      } else {
        t.kind = Tok::Int;
        t.i = std::strtoll(num.c_str(), &end, 10);
      }
      if (errno == ERANGE || (end && *end)) diags.error(t.loc, "malformed or out-of-range number '" + num + "'");
      t.text = num;
      advance(j - i);
    } else if (c == '"') {
      size_t j = i + 1;
      std::string text;
      bool closed = false;
      while (j < s.size() && s[j] != '\n') {
        if (s[j] == '\\' && j + 1 < s.size()) {
          text += s[j + 1] == 'n' ? '\n' : s[j + 1];
          j += 2;
          continue;
        }
        if (s[j] == '"') {
          closed = true;
          ++j;
          break;
        }
        text += s[j++];
      }
      if (!closed) diags.error(t.loc, "unterminated string");
      t.kind = Tok::String;
      t.text = text;
      advance(j - i);
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      t.kind = Tok::Punct;
      t.text = "->";
      advance(2);
    } else if (std::string_view("()[]{}<>,:=?").find(c) != std::string_view::npos) {
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
      advance(1);
    } else {
      diags.error(t.loc, std::string("unexpected character '") + c + "'");
      advance(1);
      continue;
    }
    (void)start;
    t.leadingComments = std::move(pending);
    pending.clear();
    out.push_back(std::move(t));
    tokenOnLine = true;
  }
  tail = std::move(pending);
  Token end;
  end.kind = Tok::End;
  end.loc = {line, col};
  out.push_back(end);
  return out;
}

}  // namespace hostjit
