#include <cctype>
#include <charconv>
#include <string>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/balance/balance_proposal.h"
#include "router/commands/santral_commands.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

std::optional<double> parse_ratio(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !(value >= 1) || value > 1000)
    return std::nullopt;
  return value;
}

// PLAN [BY ops|keys|bytes] [RATIO r] [SAMPLES n] [WINDOW ms], from args[3] on.
std::optional<ControlPlane::BalanceRequest> read_request(std::span<const std::string_view> args) {
  if (!protocol::equals_nocase(args[2], "PLAN")) return std::nullopt;
  ControlPlane::BalanceRequest request;
  for (std::size_t i = 3; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return std::nullopt;
    std::string_view option = args[i], value = args[i + 1];
    if (protocol::equals_nocase(option, "BY")) {
      std::string by(value);
      for (auto& c : by) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (by != "ops" && by != "keys" && by != "bytes") return std::nullopt;
      request.by = by;
    } else if (protocol::equals_nocase(option, "RATIO")) {
      auto ratio = parse_ratio(value);
      if (!ratio) return std::nullopt;
      request.target_ratio = *ratio;
    } else if (protocol::equals_nocase(option, "SAMPLES")) {
      auto samples = protocol::parse_integer<unsigned>(value);
      if (!samples || *samples == 0 || *samples > 100000) return std::nullopt;
      request.samples = *samples;
    } else if (protocol::equals_nocase(option, "WINDOW")) {
      auto window = protocol::parse_integer<unsigned>(value);
      if (!window || *window > 60000) return std::nullopt;
      request.window_ms = *window;
    } else {
      return std::nullopt;
    }
  }
  return request;
}

}  // namespace

// SANTRAL BALANCE PLAN ...: measured and planned on the server's thread, answered here as one
// text: the report, then (when the plan changes something) the proposed config after a line
// "--- proposed config ---" (santral balance --write FILE saves that part).
void santral_balance(const Routed& routed) {
  auto& client = routed.client;
  auto request = read_request(routed.request.args);
  if (!request)
    return client.reply_error(protocol::error_message(protocol::ClientError::BalanceSyntax));
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  int resp = client.state().protocol;
  client.worker().shared().control->balance(
      *request,
      answer_on<ControlPlane::BalanceAnswer>(
          client.worker().io(), [keep, slot, resp](const ControlPlane::BalanceAnswer& answer) {
            std::string out;
            protocol::RespWriter writer(out, resp);
            if (!answer.error.empty()) {
              writer.error(answer.error);
            } else {
              std::string text = answer.report;
              if (!answer.config_text.empty())
                text += std::string(kProposedConfigMarker) + answer.config_text;
              writer.bulk(text);
            }
            keep->deliver(slot, 0, out);
          }));
}

}  // namespace santral::router
