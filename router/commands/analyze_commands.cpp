#include <optional>
#include <string>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/analysis/raw_samples.h"
#include "router/balance/balance_proposal.h"
#include "router/commands/santral_commands.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

constexpr double kLongestSeconds = 3600;

struct AnalyzeCommand {
  ControlPlane::AnalyzeRequest request;
  bool json = false;
};

// <target> [SECONDS n] [SAMPLE rate] [KEY candidate] [FORMAT text|json] [RAW], from args[2] on.
std::optional<AnalyzeCommand> read_command(std::span<const std::string_view> args) {
  AnalyzeCommand out;
  out.request.target.target = std::string(args[2]);
  for (std::size_t i = 3; i < args.size(); ++i) {
    std::string_view option = args[i];
    if (protocol::equals_nocase(option, "RAW")) {
      out.request.raw = true;
      continue;
    }
    if (i + 1 >= args.size()) return std::nullopt;
    std::string_view value = args[++i];
    if (protocol::equals_nocase(option, "SECONDS")) {
      auto seconds = protocol::parse_number_in(value, 0, kLongestSeconds);
      if (!seconds) return std::nullopt;
      out.request.seconds = *seconds;
    } else if (protocol::equals_nocase(option, "SAMPLE")) {
      auto rate = protocol::parse_number_in(value, 0, 1);
      if (!rate) return std::nullopt;
      out.request.rate = *rate;
    } else if (protocol::equals_nocase(option, "KEY")) {
      out.request.target.candidate = std::string(value);
    } else if (protocol::equals_nocase(option, "FORMAT")) {
      if (protocol::equals_nocase(value, "json"))
        out.json = true;
      else if (!protocol::equals_nocase(value, "text"))
        return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

// SANTRAL ANALYZE: sampled and analyzed on the server's thread, answered here after the window
// as one text (the report, then after "--- proposed config ---" the config file with the
// recommendation applied, when it changes the namespace), or as JSON. RAW is a fleet peer's
// part: this router's sampled requests, one array each.
void santral_analyze(const Routed& routed) {
  auto& client = routed.client;
  auto command = read_command(routed.request.args);
  if (!command)
    return client.reply_error(protocol::error_message(protocol::ClientError::AnalyzeSyntax));
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  int resp = client.state().protocol;
  bool json = command->json;
  bool raw = command->request.raw;
  client.worker().shared().control->analyze(
      std::move(command->request),
      answer_on<ControlPlane::AnalyzeAnswer>(
          client.worker().io(),
          [keep, slot, resp, json, raw](const ControlPlane::AnalyzeAnswer& answer) {
            std::string out;
            protocol::RespWriter writer(out, resp);
            if (!answer.error.empty()) {
              writer.error(answer.error);
            } else if (raw) {
              out = raw_samples_reply(answer.raw);
            } else if (json) {
              writer.bulk(report_json(answer.report));
            } else {
              std::string text = report_text(answer.report);
              if (!answer.config_text.empty())
                text += std::string(kProposedConfigMarker) + answer.config_text;
              writer.bulk(text);
            }
            keep->deliver(slot, 0, out);
          }));
}

}  // namespace santral::router
