// test_signature_cache.cpp - graph mode's signatures without a backend:
// found by key (the last call's compared first), taken out, the oldest by
// use, a program's by key prefix, entries on probation in the order they
// came, the keys that left probation known when they come back, and
// evicted entries' operations and allocations reused reset, with their
// buffers.
#include <catch2/catch.hpp>

#include <string>

#include "graph/signature_cache.h"

using hj::GraphEntry;
using hj::PlannedAlloc;
using hj::PlannedOp;
using hj::SignatureCache;

TEST_CASE("signature cache: entries by key, the last call's first, the oldest by use", "[unit][graph]") {
  SignatureCache c;
  CHECK(c.find("abc") == nullptr);
  CHECK(c.oldest() == nullptr);
  GraphEntry *a = c.insert("prog1:a", false), *b = c.insert("prog1:b", false), *d = c.insert("prog2:d", false);
  CHECK(c.size() == 3);
  CHECK(c.find("prog1:a") == a);
  CHECK(c.find("prog1:b") == b);
  CHECK(c.find("prog1:c") == nullptr);
  // The last call's entry is compared first; a key of another length or
  // other bytes still finds its own.
  c.setLast(b);
  CHECK(c.find("prog1:b") == b);
  CHECK(c.find("prog2:d") == d);
  CHECK(c.find("prog1:") == nullptr);
  // Inserted in order: a is the oldest until it is used again.
  CHECK(c.oldest() == a);
  a->lastUse = c.tick();
  CHECK(c.oldest() == b);
  CHECK(c.withPrefix("prog1:").size() == 2);
  CHECK(c.withPrefix("prog2:") == std::vector<GraphEntry *>{d});
  CHECK(c.all().size() == 3);
  // Taken out: not found, no longer the last call's.
  auto owned = c.take(b);
  CHECK(owned.get() == b);
  CHECK(c.last() == nullptr);
  CHECK(c.find("prog1:b") == nullptr);
  CHECK(c.size() == 2);
  CHECK(c.oldest() == d);
}

TEST_CASE("signature cache: an evicted entry's operations and allocations are reused, reset", "[unit][graph]") {
  SignatureCache c;
  GraphEntry *e = c.insert("k1", false);
  PlannedOp &op = c.newOp(*e);
  op.work = hj::PlannedLibrary{};
  op.stream = 3;
  op.values.assign(4096, 7);
  op.deps = {1, 2};
  op.dirty = true;
  const unsigned char *buffer = op.values.data();
  PlannedAlloc &a = c.newAlloc(*e);
  a.sizes = {4, 5};
  a.name = "t";
  a.output = true;
  a.op = 3;
  a.lastEvent = 9;
  a.lastKernel[0] = 'k';
  e->watchWhat = "a watch";
  auto owned = c.take(e);
  c.recycle(*owned);
  CHECK(owned->ops.empty());
  CHECK(owned->allocs.empty());
  GraphEntry *f = c.insert("k2", false);
  f->watchWhat = "stale";
  PlannedOp &again = c.newOp(*f);
  CHECK(std::holds_alternative<hj::PlannedKernel>(again.work));
  CHECK(again.stream == 0);
  CHECK(again.values.empty());
  CHECK(again.values.capacity() >= 4096);  // its buffer kept
  CHECK(again.values.data() == buffer);
  CHECK(again.deps.empty());
  CHECK_FALSE(again.dirty);
  CHECK(f->watchWhat.empty());  // the operations changed: the watch's name is made again
  PlannedAlloc &b = c.newAlloc(*f);
  CHECK(b.sizes.empty());
  CHECK(b.name.empty());
  CHECK_FALSE(b.output);
  CHECK(b.op == -1);
  CHECK(b.lastEvent == SIZE_MAX);
  CHECK(b.lastKernel[0] == 0);
  // None left: new ones.
  CHECK(c.newOp(*f).values.capacity() == 0);
}

TEST_CASE("signature cache: entries on probation leave in the order they came, until called again", "[unit][graph]") {
  SignatureCache c;
  CHECK(c.oldestOnProbation() == nullptr);
  GraphEntry *a = c.insert("a", true), *kept = c.insert("kept", false), *b = c.insert("b", true);
  CHECK(c.onProbation() == 2);
  CHECK(a->probation);
  CHECK_FALSE(kept->probation);
  CHECK(c.oldestOnProbation() == a);
  // Used again (the cache's hit), a leaves probation; b is next to go.
  c.graduate(*a);
  CHECK_FALSE(a->probation);
  CHECK(c.onProbation() == 1);
  CHECK(c.oldestOnProbation() == b);
  c.graduate(*a);  // a second time changes nothing
  CHECK(c.onProbation() == 1);
  // Taken out, it is no longer on probation either.
  auto owned = c.take(b);
  CHECK(c.onProbation() == 0);
  CHECK(c.oldestOnProbation() == nullptr);
  CHECK(c.size() == 2);
}

TEST_CASE("signature cache: a key that left probation is known once when it comes back", "[unit][graph]") {
  SignatureCache c;
  CHECK_FALSE(c.cameBack("k"));
  GraphEntry *e = c.insert("k", true);
  c.leavingProbation(*e);
  auto owned = c.take(e);
  CHECK_FALSE(c.cameBack("other"));
  CHECK(c.cameBack("k"));
  CHECK_FALSE(c.cameBack("k"));  // forgotten once asked
  // Thousands of keys leaving: the set starts again past 4096, and allocates once.
  for (int i = 0; i < 5000; ++i) {
    GraphEntry *x = c.insert("key" + std::to_string(i), true);
    c.leavingProbation(*x);
    auto gone = c.take(x);
  }
  CHECK(c.cameBack("key4999"));
  CHECK_FALSE(c.cameBack("key0"));
}
