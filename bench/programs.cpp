// programs.cpp - builds the benchmark programs' text.
#include "programs.h"

namespace hostjit::bench {

std::string segmentedProgram(int segments) {
  std::string s =
      "kernel @empty(ptr<f32>, ptr<f32>, ptr<i32>, i64) {\n  host = \"empty\"\n}\n\n"
      "func @main(%x: f32[?, ?]) -> (f32[?, ?]) {\n"
      "  %n = size %x, 0\n  %h = size %x, 1\n  %total = mul %n, %h\n  %blocks = ceildiv %total, 256\n"
      "  %y = alloc f32[%n, %h]\n";
  for (int i = 0; i < segments; ++i) {
    std::string k = std::to_string(i);
    s += "  %w" + k + " = alloc f32[%blocks]\n";
    s += "  %s" + k + " = alloc i32[%blocks] zero_init resets_to_zero\n";
    s += "  launch @empty grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %w" + k + ", %s" + k + ", %total)\n";
    s += "  free %w" + k + "\n  free %s" + k + "\n";
  }
  return s + "  return %y\n}\n";
}

}  // namespace hostjit::bench

namespace hostjit::bench {

std::string launchProgram(int launches, const std::string &cudaSource, int64_t perBlock, bool boundsChecked) {
  auto cuda = [&](const char *entry) {
    return (cudaSource.empty() ? std::string() : "  cuda = \"" + cudaSource + "\"\n  entry = \"" + entry + "\"\n") +
           (boundsChecked ? "  bounds_checked = true\n" : "");
  };
  std::string s =
      "kernel @step(ptr<f32>, ptr<f32>, i64) {\n  host = \"empty\"\n" + cuda("step") + "}\n\n"
      "kernel @step_sem(ptr<f32>, ptr<f32>, ptr<i32>, i64) {\n  host = \"empty\"\n" + cuda("step_sem") + "}\n\n"
      "func @main(%x: f32[?, ?]) -> (f32[?, ?]) {\n"
      "  %n = size %x, 0\n  %h = size %x, 1\n  %total = mul %n, %h\n  %blocks = ceildiv %total, " + std::to_string(perBlock) + "\n"
      "  %y = alloc f32[%n, %h]\n";
  for (int i = 0; i < launches; ++i) {
    std::string k = std::to_string(i);
    s += "  %w" + k + " = alloc f32[%blocks]\n";
    if (i % 4 == 0) {
      s += "  %s" + k + " = alloc i32[%blocks] zero_init resets_to_zero\n";
      s += "  launch @step_sem grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %w" + k + ", %s" + k + ", %total)\n";
      s += "  free %s" + k + "\n";
    } else {
      s += "  launch @step grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %w" + k + ", %total)\n";
    }
    s += "  free %w" + k + "\n";
  }
  return s + "  return %y\n}\n";
}

}  // namespace hostjit::bench

namespace hostjit::bench {

std::string manyInputsProgram(int inputs, const std::string &cudaSource) {
  std::string params = "ptr<f32>";
  for (int j = 0; j < 20; ++j) params += ", ptr<f32>";
  std::string s = "kernel @touch20(" + params + ") {\n  host = \"empty\"\n" +
                  (cudaSource.empty() ? std::string() : "  cuda = \"" + cudaSource + "\"\n  entry = \"touch20\"\n") +
                  "}\n\nfunc @main(";
  for (int i = 0; i < inputs; ++i) s += (i ? ", %w" : "%w") + std::to_string(i) + ": f32[64]";
  s += ") -> (f32[1]) {\n  %y = alloc f32[1]\n";
  int next = 0;
  for (int k = 0; k < 16; ++k) {
    s += "  launch @touch20 grid(1, 1, 1) block(32, 1, 1) smem(0) (%y";
    for (int j = 0; j < 20; ++j) s += ", %w" + std::to_string(next++ % inputs);
    s += ")\n";
  }
  return s + "  return %y\n}\n";
}

}  // namespace hostjit::bench
