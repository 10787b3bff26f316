#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "protocol/learned_commands.h"
#include "protocol/request.h"
#include "router/runtime/plan.h"

namespace santral::router {

// What a plan was made from besides the request: when a request that waited resumes and all of
// it is still so, the plan it made stands (only the fleet's standing and refused writes, which
// change by the moment, are checked again); else it is planned again. Taken only when a
// request waits, so the request path pays nothing for it.
struct PlannedUnder {
  std::uint64_t topology_version = 0;
  std::uint64_t salts_generation = 0;  // the salted counters the plan points into
  // The learned commands the plan's command may be one of: held, so they stay where they are.
  std::shared_ptr<const protocol::LearnedCommands> learned;
};

// One client request from its parsing to its dispatch: the bytes the parser found, the plan
// made of them, and where it stands when it must wait (for its client's earlier replies, a
// pull of its keys, a token of its user's rate). A request that waits keeps all of it and
// resumes where it stopped: it is parsed once, and planned once unless what the plan was made
// from changed meanwhile (PlannedUnder). Its views into the connection's read buffer stay valid
// while it waits: the connection reads nothing more until it was dispatched (ClientSession).
// A client has at most one; it lives with the client's read buffer (router/session/).
struct ActiveRequest {
  protocol::Request request;
  std::size_t bytes = 0;  // its length in the read buffer
  bool parsed = false;    // parsed and not dispatched to the end yet
  Plan plan;              // its buffers are kept from one request to the next
  // Set while it waits with its plan made: what that plan was made under.
  std::optional<PlannedUnder> planned;
  // When it was first read, while it waits (its time counts from then).
  std::optional<std::chrono::steady_clock::time_point> waiting_since;
  // Its ACL denial is in ACL LOG: planned again after a wait, it is not logged twice.
  bool denial_logged = false;
  std::string scratch;  // request bytes a route builds (rewritten commands)

  // Dispatched to the end: the next one is parsed afresh.
  void done() {
    parsed = false;
    planned.reset();
    waiting_since.reset();
    denial_logged = false;
  }
};

}  // namespace santral::router
