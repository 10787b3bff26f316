#include "tests/support/planned_request.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "protocol/resp_writer.h"
#include "router/plan/planner.h"

namespace santral::test {

ClientRequest::ClientRequest(std::vector<std::string> args, Form form) : args_(std::move(args)) {
  views_.assign(args_.begin(), args_.end());
  if (form == Form::Multibulk) protocol::RespWriter(raw_).command(views_);
  request_ = {views_, raw_, form == Form::Inline};
}

PlannedRequest::PlannedRequest(FakeRequestContext& client, std::vector<std::string> args, Form form)
    : client_(client), request_(std::move(args), form) {
  auto& worker = client.worker();
  const auto& topology = worker.topology();
  router::build_plan(
      router::PlanContext{*topology.map, &worker.salts(), client.state(),
                          client.held().in_transaction(), client.held().subscribed(),
                          topology.config->backend.database, topology.config->cross_shard_writes,
                          client.state().permissions.get(), topology.move.get(), topology.version,
                          &worker.learned(), topology.config->cluster_endpoint},
      request_.request(), plan_);
  if (plan_.spec == nullptr) throw std::logic_error("no such command: " + plan_.error);
  const auto& args_seen = request_.request().args;
  client.begin(*plan_.spec, args_seen, plan_);
}

router::Dispatched dispatch_request(FakeRequestContext& client, std::vector<std::string> args) {
  auto& active = client.active();
  if (active.parsed) {
    if (!std::equal(args.begin(), args.end(), active.request.args.begin(),
                    active.request.args.end()))
      throw std::logic_error("a waiting request resumes with its own arguments, not others");
  } else {
    auto request = std::make_shared<ClientRequest>(std::move(args));
    active.request = request->request();
    active.parsed = true;
    client.kept_request = std::move(request);
  }
  auto dispatched = router::dispatch(client, active);
  if (dispatched == router::Dispatched::Done) {
    active.done();
    client.kept_request.reset();
  }
  return dispatched;
}

router::Plan run(FakeRequestContext& client, std::vector<std::string> args,
                 void (*route)(const router::Routed&)) {
  PlannedRequest request(client, std::move(args));
  route(request.routed());
  return request.plan();
}

}  // namespace santral::test
