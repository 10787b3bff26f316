#include "router/routes/monitor_feed.h"

#include <cctype>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/post.hpp>

#include "protocol/redacted_arguments.h"
#include "router/runtime/request_context.h"
#include "router/runtime/shared_state.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

// An argument quoted as Redis's sdscatrepr does.
void quote(std::string& out, std::string_view arg) {
  out.push_back('"');
  for (char c : arg) {
    switch (c) {
      case '\\':
      case '"':
        out.push_back('\\');
        out.push_back(c);
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (std::isprint(static_cast<unsigned char>(c))) {
          out.push_back(c);
        } else {
          fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned char>(c));
        }
    }
  }
  out.push_back('"');
}

}  // namespace

std::string monitor_line(std::chrono::system_clock::time_point at, int database,
                         std::string_view peer, std::span<const std::string_view> args) {
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
  std::string out =
      fmt::format("+{}.{:06} [{} {}]", micros / 1'000'000, micros % 1'000'000, database, peer);
  std::vector<bool> hide(args.size(), false);
  protocol::for_each_redacted(args, [&hide](std::size_t i) { hide[i] = true; });
  for (std::size_t i = 0; i < args.size(); ++i) {
    out.push_back(' ');
    quote(out, hide[i] ? protocol::kRedacted : args[i]);
  }
  out += "\r\n";
  return out;
}

void feed_monitors(const Routed& routed) {
  auto& worker = routed.client.worker();
  const auto& state = routed.client.state();
  auto line = monitor_line(std::chrono::system_clock::now(), state.database, state.peer,
                           routed.request.args);
  for (const auto& watcher : worker.shared().monitors.watchers()) {
    // Not to itself: Redis shows a monitor's command after it ran (RESET's: to nobody).
    if (watcher.client == state.id) continue;
    const auto& peers = worker.peers();
    WorkerServices* to = watcher.worker < peers.size() ? peers[watcher.worker] : &worker;
    if (to == &worker) {
      worker.push_to(watcher.client, line);
    } else {
      boost::asio::post(to->io(),
                        [to, client = watcher.client, line] { to->push_to(client, line); });
    }
  }
}

}  // namespace santral::router
