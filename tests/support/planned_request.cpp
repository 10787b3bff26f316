#include "tests/support/planned_request.h"

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

router::Plan run(FakeRequestContext& client, std::vector<std::string> args,
                 void (*route)(const router::Routed&)) {
  PlannedRequest request(client, std::move(args));
  route(request.routed());
  return request.plan();
}

}  // namespace santral::test
