// cuda_sources.cpp - include directories, built-in headers, extra options and the include scan for NVRTC.
#include "cuda/cuda_sources.h"

#include "cuda/nvrtc_headers.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace hj {

namespace fs = std::filesystem;

namespace {

bool isDir(const fs::path &p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string readAll(const fs::path &p, bool *ok) {
  std::ifstream in(p, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The toolkit's include directory: the first of CUDA_HOME, CUDA_PATH, next to
// NVRTC, /usr/local/cuda that has include/cuda.h.
std::string toolkitInclude(const std::string &nvrtcLibraryDir) {
  std::vector<fs::path> roots;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v) roots.emplace_back(v);
  if (!nvrtcLibraryDir.empty()) roots.push_back(fs::path(nvrtcLibraryDir).parent_path());
  roots.emplace_back("/usr/local/cuda");
  for (const fs::path &r : roots) {
    std::error_code ec;
    if (fs::exists(r / "include" / "cuda.h", ec)) return (r / "include").lexically_normal().string();
  }
  return {};
}

// The names a source includes, with whether they were written "..." (local).
std::vector<std::pair<std::string, bool>> includesOf(const std::string &text) {
  std::vector<std::pair<std::string, bool>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line.compare(i, 7, "include") != 0) continue;
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) continue;
    char close = line[i] == '"' ? '"' : '>';
    size_t j = line.find(close, i + 1);
    if (j == std::string::npos) continue;
    out.emplace_back(line.substr(i + 1, j - i - 1), close == '"');
  }
  return out;
}

}  // namespace

std::vector<std::string> splitOptions(const char *text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::string cur;
  bool any = false;
  char quote = 0;
  for (const char *p = text; *p; ++p) {
    char c = *p;
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      any = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (any || !cur.empty()) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

CudaCompileInputs cudaCompileInputs(const hj_kernel_desc &desc, const std::string &nvrtcLibraryDir) {
  CudaCompileInputs in;
  fs::path source = desc.cuda_path ? fs::path(desc.cuda_path) : fs::path();
  fs::path dir = source.has_parent_path() ? source.parent_path() : fs::path(".");
  std::error_code ec;
  fs::path absDir = fs::absolute(dir, ec).lexically_normal();
  std::vector<fs::path> searchDirs = {absDir};
  std::vector<fs::path> toolkitDirs;
  if (std::string tk = toolkitInclude(nvrtcLibraryDir); !tk.empty()) {
    toolkitDirs.emplace_back(tk);
    if (isDir(fs::path(tk) / "cccl")) toolkitDirs.push_back(fs::path(tk) / "cccl");
  }
  std::vector<std::string> extra = splitOptions(desc.nvrtc_options);
  for (const std::string &o : splitOptions(std::getenv("HOSTJIT_NVRTC_OPTIONS"))) extra.push_back(o);
  std::vector<std::string> user;
  for (size_t i = 0; i < extra.size(); ++i) {
    std::string o = extra[i];
    std::string incDir;
    if ((o == "-I" || o == "--include-path") && i + 1 < extra.size()) incDir = extra[++i];
    else if (o.rfind("--include-path=", 0) == 0) incDir = o.substr(15);
    else if (o.rfind("-I", 0) == 0 && o.size() > 2) incDir = o.substr(2);
    if (incDir.empty()) {
      user.push_back(o);
      continue;
    }
    fs::path p(incDir);
    if (p.is_relative()) p = (absDir / p).lexically_normal();
    searchDirs.push_back(p);
    user.push_back("-I" + p.string());
  }
  in.options.push_back("-I" + absDir.string());
  for (const fs::path &t : toolkitDirs) in.options.push_back("-I" + t.string());
  for (std::string &o : user) in.options.push_back(std::move(o));
  in.headers = nvrtcHeaders();

  // Walk the includes. Local files are hashed with their contents; toolkit
  // headers by path (they change with the toolkit, whose NVRTC version is in
  // the key); names found nowhere are listed as such.
  std::set<std::string> seen;
  std::vector<std::pair<fs::path, std::string>> work;
  if (desc.cuda_source) work.emplace_back(absDir, desc.cuda_source);
  while (!work.empty()) {
    auto [from, text] = std::move(work.back());
    work.pop_back();
    for (const auto &[name, local] : includesOf(text)) {
      if (isNvrtcHeader(name)) continue;
      std::vector<fs::path> candidates;
      if (local) candidates.push_back(from / name);
      for (const fs::path &d : searchDirs) candidates.push_back(d / name);
      bool found = false;
      for (const fs::path &c : candidates) {
        fs::path p = c.lexically_normal();
        if (!fs::is_regular_file(p, ec)) continue;
        found = true;
        if (!seen.insert(p.string()).second) break;
        bool ok = false;
        std::string body = readAll(p, &ok);
        in.dependencies += "file " + p.string() + " " + std::to_string(body.size()) + "\n" + body + "\n";
        work.emplace_back(p.parent_path(), std::move(body));
        break;
      }
      if (found) continue;
      for (const fs::path &d : toolkitDirs) {
        fs::path p = (d / name).lexically_normal();
        if (fs::is_regular_file(p, ec)) {
          found = true;
          if (seen.insert(p.string()).second) in.dependencies += "toolkit " + p.string() + "\n";
          break;
        }
      }
      if (!found && seen.insert("?" + name).second) in.dependencies += "unresolved " + name + "\n";
    }
  }
  return in;
}

}  // namespace hj
