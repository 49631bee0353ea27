// each_path.h - runs a test body on every way a program runs: the evaluator
// and the JIT, each eagerly and in graph mode; shared by the unit and GPU
// tests.
#pragma once

#include <catch2/catch.hpp>

namespace hostjit::testpaths {

// Calls f(useJit, graph) for the evaluator and the JIT, eager and in graph
// mode, each with an INFO naming it.
template <class F>
void eachPath(F &&f) {
  for (bool useJit : {false, true})
    for (bool graph : {false, true}) {
      INFO((useJit ? "jit" : "eval") << (graph ? ", graph" : ""));
      f(useJit, graph);
    }
}

}  // namespace hostjit::testpaths
