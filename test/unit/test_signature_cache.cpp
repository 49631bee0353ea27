// test_signature_cache.cpp - graph mode's signatures without a backend:
// found by key (the last call's compared first), taken out, the oldest by
// use, a program's by key prefix, and evicted entries' operations and
// allocations reused reset, with their buffers.
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
  GraphEntry *a = c.insert("prog1:a"), *b = c.insert("prog1:b"), *d = c.insert("prog2:d");
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
  GraphEntry *e = c.insert("k1");
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
  GraphEntry *f = c.insert("k2");
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
