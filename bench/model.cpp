// model.cpp - the text of a GPT-2-shaped forward pass (see programs.h).
#include <string>

#include "programs.h"

namespace hostjit::bench {

namespace {

struct Writer {
  std::string s;
  void line(const std::string &l) { s += "  " + l + "\n"; }
  void launch(const std::string &k, const std::string &grid, const std::string &args) {
    line("launch @" + k + " grid(" + grid + ", 1, 1) block(256, 1, 1) smem(0) (" + args + ")");
  }
};

}  // namespace

std::string modelProgram(int layers, const std::string &cudaSource) {
  struct K {
    const char *name, *params;
  } kernels[] = {
      {"encoder", "ptr<f32>, ptr<i32>, ptr<f32>, ptr<f32>, i32, i32, i32"},
      {"layernorm", "ptr<f32>, ptr<f32>, ptr<f32>, ptr<f32>, ptr<f32>, ptr<f32>, i32, i32"},
      {"matmul", "ptr<f32>, ptr<f32>, ptr<f32>, ptr<f32>, i32, i32, i32"},
      {"matmul_nobias", "ptr<f32>, ptr<f32>, ptr<f32>, i32, i32, i32"},
      {"permute", "ptr<f32>, ptr<f32>, ptr<f32>, ptr<f32>, i32, i32, i32, i32"},
      {"attn_scores", "ptr<f32>, ptr<f32>, ptr<f32>, i32, i32, i32, i32"},
      {"softmax", "ptr<f32>, ptr<f32>, f32, i32, i32"},
      {"attn_values", "ptr<f32>, ptr<f32>, ptr<f32>, i32, i32, i32, i32"},
      {"unpermute", "ptr<f32>, ptr<f32>, i32, i32, i32, i32"},
      {"residual", "ptr<f32>, ptr<f32>, ptr<f32>, i32"},
      {"gelu", "ptr<f32>, ptr<f32>, i32"},
  };
  std::string s;
  for (const K &k : kernels) {
    s += std::string("kernel @") + k.name + "(" + k.params + ") {\n  host = \"empty\"\n";
    if (!cudaSource.empty()) s += "  cuda = \"" + cudaSource + "\"\n  entry = \"" + k.name + "\"\n";
    s += "}\n\n";
  }
  s += "func @main(%tokens: i32[?, ?], %wte: f32[?, ?], %wpe: f32[?, ?]";
  const char *weights[] = {"ln1w", "ln1b", "qkvw", "qkvb", "projw", "projb", "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb"};
  for (int l = 0; l < layers; ++l)
    for (const char *w : weights) {
      bool matrix = std::string(w).back() == 'w' && std::string(w).substr(0, 2) != "ln";
      s += std::string(", %") + w + std::to_string(l) + (matrix ? ": f32[?, ?]" : ": f32[?]");
    }
  s += ", %lnfw: f32[?], %lnfb: f32[?], %nh: i64) -> (f32[?, ?, ?]) {\n";
  Writer w;
  w.line("%B = size %tokens, 0");
  w.line("%T = size %tokens, 1");
  w.line("%V = size %wte, 0");
  w.line("%C = size %wte, 1");
  w.line("%BT = mul %B, %T");
  w.line("%C3 = mul %C, 3");
  w.line("%C4 = mul %C, 4");
  w.line("%HS = div %C, %nh");
  w.line("%BTC = mul %BT, %C");
  w.line("%BTC4 = mul %BTC, 4");
  w.line("%BNH = mul %B, %nh");
  w.line("%att_n = mul %BNH, %T");
  w.line("%att_elems = mul %att_n, %T");
  for (const char *n : {"B", "T", "C", "V", "BT", "C3", "C4", "HS", "BTC", "BTC4", "BNH"})
    w.line(std::string("%") + n + "_32 = to_i32 %" + n);
  w.line("%NH_32 = to_i32 %nh");
  w.line("%hsf = to_f32 %HS");
  w.line("%scale = rsqrt %hsf");
  w.line("%g_btc = ceildiv %BTC, 256");
  w.line("%g_btc4 = ceildiv %BTC4, 256");
  w.line("%g_bt = ceildiv %BT, 8");
  w.line("%g_att = ceildiv %att_elems, 256");
  w.line("%res_in = alloc f32[%B, %T, %C]");
  w.launch("encoder", "%g_btc", "%res_in, %tokens, %wte, %wpe, %B_32, %T_32, %C_32");
  std::string res = "%res_in";
  auto layernorm = [&](const std::string &out, const std::string &in, const std::string &wt, const std::string &b) {
    w.line(out + " = alloc f32[%B, %T, %C]");
    w.line(out + "_mean = alloc f32[%BT]");
    w.line(out + "_rstd = alloc f32[%BT]");
    w.launch("layernorm", "%g_bt", out + ", " + out + "_mean, " + out + "_rstd, " + in + ", " + wt + ", " + b + ", %BT_32, %C_32");
    w.line("free " + out + "_mean");
    w.line("free " + out + "_rstd");
  };
  for (int l = 0; l < layers; ++l) {
    std::string L = std::to_string(l), p = "%l" + L + "_";
    layernorm(p + "ln1", res, "%ln1w" + L, "%ln1b" + L);
    w.line(p + "qkv = alloc f32[%B, %T, %C3]");
    w.launch("matmul", "%g_btc", p + "qkv, " + p + "ln1, %qkvw" + L + ", %qkvb" + L + ", %BT_32, %C_32, %C3_32");
    w.line("free " + p + "ln1");
    for (const char *h : {"q", "k", "v"}) w.line(p + h + " = alloc f32[%B, %nh, %T, %HS]");
    w.launch("permute", "%g_btc", p + "q, " + p + "k, " + p + "v, " + p + "qkv, %B_32, %T_32, %NH_32, %HS_32");
    w.line("free " + p + "qkv");
    w.line(p + "preatt = alloc f32[%B, %nh, %T, %T]");
    w.launch("attn_scores", "%g_att", p + "preatt, " + p + "q, " + p + "k, %B_32, %NH_32, %T_32, %HS_32");
    w.line(p + "att = alloc f32[%B, %nh, %T, %T]");
    w.launch("softmax", "%g_att", p + "att, " + p + "preatt, %scale, %BNH_32, %T_32");
    w.line("free " + p + "preatt");
    w.line(p + "vacc = alloc f32[%B, %nh, %T, %HS]");
    w.launch("attn_values", "%g_btc", p + "vacc, " + p + "att, " + p + "v, %B_32, %NH_32, %T_32, %HS_32");
    for (const char *h : {"att", "q", "k", "v"}) w.line("free " + p + h);
    w.line(p + "atty = alloc f32[%B, %T, %C]");
    w.launch("unpermute", "%g_btc", p + "atty, " + p + "vacc, %B_32, %T_32, %NH_32, %HS_32");
    w.line("free " + p + "vacc");
    w.line(p + "proj = alloc f32[%B, %T, %C]");
    w.launch("matmul", "%g_btc", p + "proj, " + p + "atty, %projw" + L + ", %projb" + L + ", %BT_32, %C_32, %C_32");
    w.line("free " + p + "atty");
    w.line(p + "res2 = alloc f32[%B, %T, %C]");
    w.launch("residual", "%g_btc", p + "res2, " + res + ", " + p + "proj, %BTC_32");
    w.line("free " + p + "proj");
    w.line("free " + res);
    layernorm(p + "ln2", p + "res2", "%ln2w" + L, "%ln2b" + L);
    w.line(p + "fch = alloc f32[%B, %T, %C4]");
    w.launch("matmul", "%g_btc4", p + "fch, " + p + "ln2, %fcw" + L + ", %fcb" + L + ", %BT_32, %C_32, %C4_32");
    w.line("free " + p + "ln2");
    w.line(p + "fchg = alloc f32[%B, %T, %C4]");
    w.launch("gelu", "%g_btc4", p + "fchg, " + p + "fch, %BTC4_32");
    w.line("free " + p + "fch");
    w.line(p + "fcproj = alloc f32[%B, %T, %C]");
    w.launch("matmul", "%g_btc", p + "fcproj, " + p + "fchg, %fcprojw" + L + ", %fcprojb" + L + ", %BT_32, %C4_32, %C_32");
    w.line("free " + p + "fchg");
    w.line(p + "res3 = alloc f32[%B, %T, %C]");
    w.launch("residual", "%g_btc", p + "res3, " + p + "res2, " + p + "fcproj, %BTC_32");
    w.line("free " + p + "fcproj");
    w.line("free " + p + "res2");
    res = p + "res3";
  }
  layernorm("%lnf", res, "%lnfw", "%lnfb");
  w.line("free " + res);
  w.line("%logits = alloc f32[%B, %T, %V]");
  w.launch("matmul_nobias", "%g_btc", "%logits, %lnf, %wte, %BT_32, %C_32, %V_32");
  w.line("free %lnf");
  w.line("return %logits");
  return s + w.s + "}\n";
}

std::map<std::string, std::vector<int64_t>> modelShapes(int layers) {
  const int64_t B = 4, T = 64, C = 128, V = 512;
  std::map<std::string, std::vector<int64_t>> m = {
      {"tokens", {B, T}}, {"wte", {V, C}}, {"wpe", {T, C}}, {"lnfw", {C}}, {"lnfb", {C}}};
  for (int l = 0; l < layers; ++l) {
    std::string L = std::to_string(l);
    for (const char *v : {"ln1w", "ln1b", "ln2w", "ln2b", "projb", "fcprojb"}) m[v + L] = {C};
    m["qkvw" + L] = {3 * C, C}, m["qkvb" + L] = {3 * C};
    m["projw" + L] = {C, C};
    m["fcw" + L] = {4 * C, C}, m["fcb" + L] = {4 * C};
    m["fcprojw" + L] = {C, 4 * C};
  }
  return m;
}

}  // namespace hostjit::bench
