#include <string>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/commands/santral_commands.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

using Verb = ControlPlane::ReshardVerb;

std::optional<Verb> verb_named(std::string_view name) {
  static constexpr std::pair<std::string_view, Verb> kVerbs[] = {{"PLAN", Verb::Plan},
                                                                 {"APPROVE", Verb::Approve},
                                                                 {"STATUS", Verb::Status},
                                                                 {"ABORT", Verb::Abort}};
  for (const auto& [text, verb] : kVerbs)
    if (protocol::equals_nocase(name, text)) return verb;
  return std::nullopt;
}

std::string answer_text(Verb verb, const ControlPlane::ReshardAnswer& answer, int protocol) {
  std::string out;
  protocol::RespWriter writer(out, protocol);
  if (!answer.error.empty()) {
    writer.error(answer.error);
    return out;
  }
  switch (verb) {
    case Verb::Plan: {
      std::string text = fmt::format("state: {}\n", reshard_state_name(answer.status.state));
      text += describe_plan(answer.status) + "\n";
      writer.bulk(text);
      break;
    }
    case Verb::Status: {
      auto fields = status_fields(answer.status);
      writer.map_header(fields.size());
      for (const auto& [name, value] : fields) {
        writer.bulk(name);
        writer.bulk(value);
      }
      break;
    }
    case Verb::Approve:
    case Verb::Abort:
      writer.simple("OK");
      break;
  }
  return out;
}

}  // namespace

// SANTRAL RESHARD PLAN|APPROVE|STATUS|ABORT: asked of the server's thread, answered here.
void santral_reshard(const Routed& routed) {
  auto& client = routed.client;
  auto verb = verb_named(routed.request.args[2]);
  if (!verb)
    return client.reply_error(protocol::error_message(protocol::ClientError::ReshardSyntax));
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  int resp = client.state().protocol;
  client.worker().shared().control->reshard(
      *verb, client_actor(client.state()),
      answer_on<ControlPlane::ReshardAnswer>(
          client.worker().io(),
          [keep, slot, verb = *verb, resp](const ControlPlane::ReshardAnswer& answer) {
            keep->deliver(slot, 0, answer_text(verb, answer, resp));
          }));
}

}  // namespace santral::router
