#include "router/backend/sentinel_lookup.h"
#include "protocol/reply_scanner.h"

#include <stdexcept>

#include <fmt/format.h>

#include "config/config_error.h"
#include "protocol/reply_value.h"
#include "router/backend/blocking_call.h"

namespace santral::router {

namespace {

constexpr auto kLookupTimeout = std::chrono::milliseconds(1000);

// "ip", "port", "flags", ... of one SENTINEL REPLICAS entry (a flat field/value array).
std::string field(const protocol::ReplyValue& entry, std::string_view name) {
  for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2)
    if (entry.elements[i].text == name) return std::string(entry.elements[i + 1].text);
  return {};
}

std::optional<config::Endpoint> endpoint(const std::string& host, const std::string& port) {
  config::Endpoint out;
  if (!config::parse_endpoint(
          host.find(':') != std::string::npos ? "[" + host + "]:" + port : host + ":" + port, out))
    return std::nullopt;
  return out;
}

// One sentinel's view of `master`; throws what went wrong.
SentinelView ask_one(const config::Endpoint& sentinel, const ShardLogin& login,
                     const std::string& master, std::chrono::milliseconds timeout) {
  auto replies = blocking_call(
      sentinel, login, "sentinel.username/password",
      {{"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master}, {"SENTINEL", "REPLICAS", master}}, timeout);
  protocol::ReplyValue address, replicas;
  if (!protocol::parse_reply(replies[0], address) || address.is_error())
    throw std::runtime_error(protocol::line_text(replies[0]));
  if (address.type == protocol::ReplyValue::Type::Null)
    throw std::runtime_error(fmt::format("no master named '{}' is monitored here", master));
  if (address.elements.size() != 2)
    throw std::runtime_error("GET-MASTER-ADDR-BY-NAME answered " + protocol::line_text(replies[0]));
  SentinelView view;
  view.sentinel = sentinel.text();
  auto primary =
      endpoint(std::string(address.elements[0].text), std::string(address.elements[1].text));
  if (!primary) throw std::runtime_error("GET-MASTER-ADDR-BY-NAME answered an odd address");
  view.primary = *primary;
  if (protocol::parse_reply(replies[1], replicas) && !replicas.is_error())
    for (const auto& entry : replicas.elements) {
      auto flags = field(entry, "flags");
      if (flags.find("s_down") != std::string::npos || flags.find("o_down") != std::string::npos ||
          flags.find("disconnected") != std::string::npos ||
          field(entry, "master-link-status") != "ok")
        continue;
      if (auto replica = endpoint(field(entry, "ip"), field(entry, "port")))
        view.replicas.push_back(*replica);
    }
  return view;
}

}  // namespace

std::optional<SentinelView> ask_sentinels(const config::SentinelSettings& sentinel,
                                          const std::string& master,
                                          const config::BackendOptions& backend,
                                          const TlsContexts* tls, std::chrono::milliseconds timeout,
                                          std::string& error, const std::string& confirmed) {
  std::string said;
  for (const auto& address : sentinel.addresses) {
    try {
      auto view = ask_one(address, {sentinel.username, sentinel.password}, master, timeout);
      if (view.primary.text() == confirmed) return view;
      auto replies = blocking_call(view.primary, shard_login(backend), "backend.username/password",
                                   {{"ROLE"}, {"INFO", "replication"}}, timeout, tls);
      protocol::ReplyValue value;
      if (!protocol::parse_reply(replies[0], value) || value.elements.empty() ||
          value.elements[0].text != "master")
        throw std::runtime_error(fmt::format("it names {} as the primary, which answers ROLE {}",
                                             view.primary.text(), protocol::line_text(replies[0])));
      protocol::ReplyValue info;
      if (protocol::parse_reply(replies[1], info) && !info.is_error() &&
          info.type != protocol::ReplyValue::Type::Null)
        view.replication = std::string(info.text);
      else
        view.replication_error = "INFO replication answered " + protocol::line_text(replies[1]);
      return view;
    } catch (const std::exception& e) {
      said += fmt::format("{}{}: {}", said.empty() ? "" : "; ", address.text(), e.what());
    }
  }
  error = said;
  return std::nullopt;
}

TlsContextsPtr sentinel_tls(const config::Config& config) {
  for (const auto& shard : config.shards) {
    if (!shard.tls || shard.sentinel_master.empty()) continue;
    auto made = make_shard_contexts(config.backend.tls);
    if (!made.contexts)
      throw config::ConfigError(config.source, shard.line, "backend.tls", made.error);
    return made.contexts;
  }
  return nullptr;
}

void resolve_sentinel_shards(config::Config& config) {
  TlsContextsPtr tls;
  for (std::size_t i = 0; i < config.shards.size(); ++i) {
    auto& shard = config.shards[i];
    if (shard.sentinel_master.empty() || shard.address.port != 0) continue;  // asked already
    if (shard.tls && !tls) tls = sentinel_tls(config);
    std::string error;
    auto view = ask_sentinels(config.sentinel, shard.sentinel_master, config.backend,
                              shard.tls ? tls.get() : nullptr, kLookupTimeout, error);
    if (!view)
      throw config::ConfigError(
          config.source, shard.line, fmt::format("shards[{}].sentinel_master", i),
          fmt::format("no sentinel named the primary of '{}' ({}); check the master name and "
                      "that the sentinels in sentinel.addresses are up",
                      shard.sentinel_master, error));
    shard.address = view->primary;
    shard.replicas = view->replicas;
  }
}

void keep_sentinel_shards(config::Config& next, const config::Config& current) {
  for (auto& shard : next.shards) {
    if (shard.sentinel_master.empty()) continue;
    for (const auto& known : current.shards)
      if (known.sentinel_master == shard.sentinel_master && known.address.port != 0) {
        shard.address = known.address;
        shard.replicas = known.replicas;
        break;
      }
  }
  resolve_sentinel_shards(next);
}

}  // namespace santral::router
