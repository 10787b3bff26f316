#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/request.h"
#include "router/plan/dispatch.h"
#include "router/routes/routing.h"
#include "router/runtime/plan.h"
#include "tests/support/fake_request_context.h"

namespace santral::test {

// A client's request as the parser would hand it over: multibulk (its bytes in `raw`) or
// inline (no bytes to forward as they came).
class ClientRequest {
 public:
  enum class Form { Multibulk, Inline };
  explicit ClientRequest(std::vector<std::string> args, Form form = Form::Multibulk);
  ClientRequest(const ClientRequest&) = delete;
  ClientRequest& operator=(const ClientRequest&) = delete;

  const protocol::Request& request() const { return request_; }
  const std::string& raw() const { return raw_; }

 private:
  std::vector<std::string> args_;
  std::vector<std::string_view> views_;
  std::string raw_;
  protocol::Request request_;
};

// A request planned by build_plan for `client` on its worker's topology, as dispatch does,
// and begun on it. routed() is what a route is called with.
class PlannedRequest {
 public:
  using Form = ClientRequest::Form;
  PlannedRequest(FakeRequestContext& client, std::vector<std::string> args,
                 Form form = Form::Multibulk);

  const router::Plan& plan() const { return plan_; }
  const std::string& raw() const { return request_.raw(); }
  router::Routed routed() const { return {client_, request_.request(), *plan_.spec, plan_}; }

 private:
  FakeRequestContext& client_;
  ClientRequest request_;
  router::Plan plan_;
};

// dispatch() as a client connection calls it: `args` becomes the client's active request, or,
// when its active request is waiting (dispatch said AfterEarlierReplies), that one resumes
// (`args` must be its arguments: a client sends nothing new before it runs). The request's
// bytes stay with `client` until it was dispatched to the end.
router::Dispatched dispatch_request(FakeRequestContext& client, std::vector<std::string> args);

// Plans `args` for `client` and hands the request to `route`; the plan is returned for
// checks (the request itself is gone: only what the route recorded remains).
router::Plan run(FakeRequestContext& client, std::vector<std::string> args,
                 void (*route)(const router::Routed&));

}  // namespace santral::test
