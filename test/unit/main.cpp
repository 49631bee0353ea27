// main.cpp - Catch2's main for the unit tests, and the JIT's teardown.
#define CATCH_CONFIG_MAIN
#include "helpers.h"

namespace {
// Destroys the shared Jit when the run ends, before static destructors.
struct JitTeardown : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats &) override { hostjit::test::sharedJitSlot().reset(); }
};
}  // namespace
CATCH_REGISTER_LISTENER(JitTeardown)
