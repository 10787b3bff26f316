#include "router/tracking/own_writes.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using santral::router::OwnWrites;

TEST_CASE("BCAST NOLOOP: a key is the writer's own until each of its writes is heard") {
  OwnWrites own;
  std::vector<std::string> k{"user:1"};
  own.writing(7, k);
  own.writing(7, k);  // written twice before either fence came back
  CHECK(own.own(7, "user:1"));
  CHECK_FALSE(own.own(8, "user:1"));  // another client is told of 7's write
  CHECK_FALSE(own.own(7, "user:2"));
  own.heard(7, k, own.generation());
  CHECK(own.own(7, "user:1"));
  own.heard(7, k, own.generation());
  CHECK_FALSE(own.own(7, "user:1"));
  CHECK(own.empty());
  own.heard(7, k, own.generation());  // more fences than writes (the client turned off and on)
  CHECK(own.empty());
}

TEST_CASE("BCAST NOLOOP: a fence from before a lost broadcast connection undoes nothing") {
  OwnWrites own;
  std::vector<std::string> k{"a"};
  own.writing(1, k);
  auto before = own.generation();
  own.clear();
  CHECK_FALSE(own.own(1, "a"));
  own.writing(1, k);
  own.heard(1, k, before);
  CHECK(own.own(1, "a"));
  own.forget(1);  // the client closed
  CHECK(own.empty());
}

TEST_CASE("BCAST NOLOOP: the first push of a key after the write is the write's own") {
  OwnWrites own;
  std::vector<std::string> k{"loop:0"};
  own.writing(7, k);
  CHECK(own.take(7, "loop:0"));        // the write's own push: skipped
  CHECK_FALSE(own.own(7, "loop:0"));   // over: the next push is another client's
  CHECK_FALSE(own.take(7, "loop:0"));  // another client's SET before the fence: told
  own.heard(7, k, own.generation());   // the fence of a write its push ended changes nothing
  CHECK(own.empty());

  // A write pushed by nobody (it changed nothing) is over at its fence.
  own.writing(7, k);
  own.heard(7, k, own.generation());
  CHECK(own.empty());
  CHECK_FALSE(own.take(7, "loop:0"));

  // Two writes in flight: each push ends one; each fence is matched to one.
  own.writing(7, k);
  own.writing(7, k);
  CHECK(own.take(7, "loop:0"));
  CHECK(own.own(7, "loop:0"));
  own.heard(7, k, own.generation());
  CHECK(own.own(7, "loop:0"));  // the second write is still open
  CHECK(own.take(7, "loop:0"));
  own.heard(7, k, own.generation());
  CHECK(own.empty());
  CHECK_FALSE(own.take(8, "loop:0"));  // another client's
}
