#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "router/routes/routing.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

namespace santral::test {

// The one reply a command Santral answers itself gives `args` (planned as Local, run by
// run_local), for the unit tests of commands/.
inline std::string ask_local(FakeRequestContext& client, std::vector<std::string> args) {
  auto before = client.replies.size();
  auto plan = run(client, std::move(args), router::run_local);
  REQUIRE(plan.kind == router::RouteKind::Local);
  REQUIRE(client.replies.size() == before + 1);
  return client.replies.back();
}

// `text` as a RESP bulk string, as a command's expected answer spells it.
inline std::string bulk(std::string_view text) {
  return "$" + std::to_string(text.size()) + "\r\n" + std::string(text) + "\r\n";
}

}  // namespace santral::test
