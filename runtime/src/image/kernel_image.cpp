// kernel_image.cpp - reads cubin (CUDA ELF), fatbin and PTX images: kind,
// architectures, kernels. Every read is bounds-checked: the bytes come from
// a file the user named.
#include "image/kernel_image.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_set>

namespace hj {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint16_t kEmCuda = 190;
constexpr uint16_t kFatbinPtx = 1, kFatbinElf = 2;
constexpr uint64_t kFatbinCompressed = 0x2000 | 0x8000;  // LZ4 or zstd payloads

template <class T>
bool load(const unsigned char *p, size_t size, size_t at, T *out) {
  if (at > size || size - at < sizeof(T)) return false;
  std::memcpy(out, p + at, sizeof(T));
  return true;
}

bool readCubin(const unsigned char *p, size_t size, KernelImage *out, std::string *error) {
  if (size < 64 || p[4] != 2 || p[5] != 1) {
    *error = "a truncated or 32-bit ELF file: a cubin is a 64-bit little-endian CUDA ELF";
    return false;
  }
  uint16_t machine = 0, shentsize = 0, shnum = 0, shstrndx = 0;
  uint32_t flags = 0;
  uint64_t shoff = 0;
  load(p, size, 18, &machine);
  load(p, size, 40, &shoff);
  load(p, size, 48, &flags);
  load(p, size, 58, &shentsize);
  load(p, size, 60, &shnum);
  load(p, size, 62, &shstrndx);
  if (machine != kEmCuda) {
    *error = "an ELF file for machine " + std::to_string(machine) + ", not a CUDA cubin (machine 190)";
    return false;
  }
  // ABI version 8 and later keep the SM in bits 8-15 of e_flags, older
  // cubins in bits 0-7.
  unsigned sm = p[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
  out->archs.push_back("sm_" + std::to_string(sm));
  if (shentsize < 64 || shstrndx >= shnum || shoff > size || (size - shoff) / shentsize < shnum) {
    *error = "a truncated cubin: its section table runs past the end of the file";
    return false;
  }
  uint64_t strOff = 0, strSize = 0;
  load(p, size, shoff + uint64_t(shstrndx) * shentsize + 24, &strOff);
  load(p, size, shoff + uint64_t(shstrndx) * shentsize + 32, &strSize);
  if (strOff > size || size - strOff < strSize) {
    *error = "a truncated cubin: its section names run past the end of the file";
    return false;
  }
  // A kernel has a `.nv.info.NAME` section (its launch attributes).
  for (uint16_t i = 0; i < shnum; ++i) {
    uint32_t nameAt = 0, type = 0;
    uint64_t at = shoff + uint64_t(i) * shentsize, dataOff = 0, dataSize = 0;
    load(p, size, at, &nameAt);
    load(p, size, at + 4, &type);
    load(p, size, at + 24, &dataOff);
    load(p, size, at + 32, &dataSize);
    constexpr uint32_t kNoBits = 8;  // SHT_NOBITS: a section with no bytes in the file
    if (type != kNoBits && (dataOff > size || size - dataOff < dataSize)) {
      *error = "a truncated cubin: section " + std::to_string(i) + " runs past the end of the file";
      return false;
    }
    if (nameAt >= strSize) continue;
    const char *name = reinterpret_cast<const char *>(p + strOff + nameAt);
    size_t len = strnlen(name, strSize - nameAt);
    std::string s(name, len);
    if (s.rfind(".nv.info.", 0) == 0 && s.size() > 9) out->entries.push_back(s.substr(9));
  }
  return true;
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// The word after `name` where a line starts with that directive (after
// blanks), or nullopt when no line does. A scan, not a regex: libstdc++'s
// regex recurses per character and a crafted file could exhaust the stack.
std::optional<std::string> directive(const std::string &t, const std::string &name) {
  for (size_t at = 0; at < t.size();) {
    size_t eol = t.find('\n', at);
    if (eol == std::string::npos) eol = t.size();
    size_t i = at;
    while (i < eol && blank(t[i])) ++i;
    if (t.compare(i, name.size(), name) == 0 && i + name.size() < eol && blank(t[i + name.size()])) {
      size_t j = i + name.size();
      while (j < eol && blank(t[j])) ++j;
      size_t k = j;
      while (k < eol && !blank(t[k]) && t[k] != ',') ++k;
      return t.substr(j, k - j);
    }
    at = eol + 1;
  }
  return std::nullopt;
}

bool readPtx(const unsigned char *p, size_t size, KernelImage *out, std::string *error) {
  std::string text(reinterpret_cast<const char *>(p), size);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  if (text.find('\0') != std::string::npos) {
    *error = "not a kernel image: binary data that is neither a cubin (ELF), a fatbin nor PTX text";
    return false;
  }
  auto version = directive(text, ".version");
  size_t dot = version ? version->find('.') : std::string::npos;
  bool digits = dot != std::string::npos && dot > 0 && dot + 1 < version->size();
  for (size_t k = 0; digits && k < version->size(); ++k)
    digits = k == dot || std::isdigit(static_cast<unsigned char>((*version)[k]));
  if (!digits) {
    *error = "not a kernel image: neither a cubin (ELF), a fatbin nor PTX (no '.version' directive)";
    return false;
  }
  auto target = directive(text, ".target");
  bool sm = target && target->size() > 3 && target->compare(0, 3, "sm_") == 0 &&
            std::isdigit(static_cast<unsigned char>((*target)[3]));
  for (size_t k = 3; sm && k < target->size(); ++k) sm = std::isalnum(static_cast<unsigned char>((*target)[k]));
  if (!sm) {
    *error = "PTX without a '.target sm_XX' directive";
    return false;
  }
  out->archs.push_back("compute_" + target->substr(3));
  for (size_t at = text.find(".entry"); at != std::string::npos; at = text.find(".entry", at + 6)) {
    size_t i = at + 6;
    if (i >= text.size() || !blank(text[i])) continue;
    while (i < text.size() && blank(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && identChar(text[i])) ++i;
    size_t end = i;
    while (i < text.size() && blank(text[i])) ++i;
    if (end > start && i < text.size() && text[i] == '(' && !std::isdigit(static_cast<unsigned char>(text[start])))
      out->entries.push_back(text.substr(start, end - start));
  }
  return true;
}

bool readFatbin(const unsigned char *p, size_t size, KernelImage *out, std::string *error) {
  uint16_t headerSize = 0;
  uint64_t fatSize = 0;
  if (!load(p, size, 6, &headerSize) || !load(p, size, 8, &fatSize) || headerSize < 16 || headerSize > size ||
      size - headerSize < fatSize) {
    *error = "a truncated fatbin: its header gives more bytes than the file has";
    return false;
  }
  bool anyUnknown = false;
  // Each name once, in the order first seen; a set keeps that linear for a
  // fatbin of very many entries.
  std::unordered_set<std::string> seenEntries, seenArchs;
  size_t at = headerSize, end = headerSize + fatSize;
  while (at < end) {
    uint16_t kind = 0;
    uint32_t entryHeader = 0, arch = 0;
    uint64_t payload = 0, flags = 0;
    if (!load(p, end, at, &kind) || !load(p, end, at + 4, &entryHeader) || !load(p, end, at + 8, &payload) ||
        !load(p, end, at + 28, &arch) || !load(p, end, at + 40, &flags) || entryHeader < 48 ||
        entryHeader > end - at || payload > end - at - entryHeader) {
      *error = "a truncated fatbin: entry at byte " + std::to_string(at) + " runs past its end";
      return false;
    }
    if (kind == kFatbinElf || kind == kFatbinPtx) {
      std::string name = (kind == kFatbinElf ? "sm_" : "compute_") + std::to_string(arch);
      if (seenArchs.insert(name).second) out->archs.push_back(std::move(name));
      if (flags & kFatbinCompressed) {
        anyUnknown = true;
      } else {
        KernelImage inner;
        std::string ignored;
        bool ok = kind == kFatbinElf ? readCubin(p + at + entryHeader, payload, &inner, &ignored)
                                     : readPtx(p + at + entryHeader, payload, &inner, &ignored);
        if (!ok) anyUnknown = true;  // its kernels cannot be listed
        for (const std::string &e : inner.entries)
          if (seenEntries.insert(e).second) out->entries.push_back(e);
      }
    }
    at += entryHeader + payload;
  }
  out->entriesKnown = !anyUnknown || !out->entries.empty();
  if (out->archs.empty()) {
    *error = "a fatbin with no code in it";
    return false;
  }
  return true;
}

}  // namespace

const char *imageKindName(KernelImage::Kind k) {
  switch (k) {
    case KernelImage::Kind::Cubin: return "cubin";
    case KernelImage::Kind::Fatbin: return "fatbin";
    case KernelImage::Kind::Ptx: return "PTX";
  }
  return "?";
}

bool readKernelImage(const void *data, size_t size, KernelImage *out, std::string *error) {
  const auto *p = static_cast<const unsigned char *>(data);
  *out = KernelImage{};
  if (size == 0) {
    *error = "an empty file, not a kernel image";
    return false;
  }
  uint32_t magic = 0;
  if (size >= 4 && std::memcmp(p, "\x7f" "ELF", 4) == 0) {
    out->kind = KernelImage::Kind::Cubin;
    return readCubin(p, size, out, error);
  }
  if (load(p, size, 0, &magic) && magic == kFatbinMagic) {
    out->kind = KernelImage::Kind::Fatbin;
    return readFatbin(p, size, out, error);
  }
  out->kind = KernelImage::Kind::Ptx;
  return readPtx(p, size, out, error);
}

bool imageRunsOn(const KernelImage &image, int major, int minor) {
  int device = major * 10 + minor;
  for (const std::string &a : image.archs) {
    bool ptx = a.rfind("compute_", 0) == 0;
    int v = std::atoi(a.c_str() + (ptx ? 8 : 3));
    bool specific = !a.empty() && std::isalpha(static_cast<unsigned char>(a.back()));
    // Machine code runs on its own major version, at its minor or later;
    // PTX is compiled for any later device; an arch-specific one ("90a")
    // only for its own.
    bool runs = ptx ? (specific ? v == device : v <= device)
                    : (specific ? v == device : v / 10 == major && v % 10 <= minor);
    if (runs) return true;
  }
  return false;
}

bool imageHasEntry(const KernelImage &image, const std::string &entry, std::string *error) {
  if (!image.entriesKnown || std::find(image.entries.begin(), image.entries.end(), entry) != image.entries.end())
    return true;
  std::string names;
  size_t listed = std::min<size_t>(image.entries.size(), 16);
  for (size_t i = 0; i < listed; ++i) names += (names.empty() ? "" : ", ") + image.entries[i];
  if (listed < image.entries.size()) names += " and " + std::to_string(image.entries.size() - listed) + " more";
  *error = std::string("the ") + imageKindName(image.kind) + " has no kernel '" + entry + "'; it has " +
           (names.empty() ? "none" : names);
  return false;
}

std::string joinArchs(const std::vector<std::string> &archs) {
  if (archs.empty()) return "none";
  std::string s;
  for (const std::string &a : archs) s += (s.empty() ? "" : ", ") + a;
  return s;
}

}  // namespace hj
