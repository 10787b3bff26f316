#include "router/process/config_reloads.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "config/acl/user_changes.h"
#include "config/config_error.h"
#include "config/shared_map.h"
#include "placement/change.h"
#include "placement/diff.h"
#include "protocol/errors.h"

namespace santral::router {

ConfigReloads::ConfigReloads(const ConfigSource& source, RouterHost& host, MoveDriver& driver,
                             LocalLedger* local, FleetSync* fleet, AuditLog* audit,
                             std::function<void(const config::Config&)> reloaded)
    : source_(source),
      host_(host),
      driver_(driver),
      local_(local),
      fleet_(fleet),
      audit_(audit),
      reloaded_(std::move(reloaded)) {
  try {
    last_read_text_ = source_.read_text();
  } catch (const config::ConfigError&) {
  }
}

void ConfigReloads::reload(const std::string& why, AuditActor who,
                           std::function<void(ReloadResult)> done) {
  auto before = host_.serving()->config;
  auto answer = [this, why, who = std::move(who), before,
                 done = std::move(done)](ReloadResult result) {
    result = remember(why, std::move(result));
    if (audit_ != nullptr)
      audit_->record({"config.reload", who, why, result.ok, protocol::one_line(result.message),
                      config::describe_user_changes(*before, *host_.serving()->config)});
    if (done) done(std::move(result));
  };
  if (fleet_) return in_fleet(why, answer);
  alone(why, answer);
}

ControlPlane::ReloadResult ConfigReloads::remember(std::string_view why, ReloadResult result) {
  last_ = ReloadRecord{result, std::string(why), std::chrono::system_clock::now()};
  return result;
}

ConfigReloads::Reading ConfigReloads::read(const std::string& why) {
  Reading reading;
  const auto& serving = *host_.serving();
  auto refused = [&](std::string error) {
    spdlog::error("reload ({}) rejected, still serving version {}: {}", why,
                  fleet_ ? serving.map_version : serving.version, error);
    reading.error = std::move(error);
    return std::move(reading);
  };
  try {
    reading.text = source_.read_text();
    last_read_text_ = reading.text;
    reading.next = source_.parse(reading.text);
    if (fleet_ && config::has_shard_map(reading.next))
      reading.file_map = config::shared_map_text(reading.text, source_.path);
  } catch (const config::ConfigError& e) {
    return refused(e.what());
  }
  // Certificates are read again at every reload: new handshakes use renewed files.
  auto tls = make_tls_contexts(reading.next);
  if (!tls.contexts) return refused(reading.next.source.string() + ": " + tls.error);
  reading.tls = std::move(tls.contexts);
  // Alone, a planned move is replaced by the reload's map; in a fleet it is etcd's.
  bool moving = fleet_ ? driver_.state() != ReshardState::Idle || serving.move != nullptr
                       : driver_.under_way();
  if (moving)
    return refused(fmt::format(
        "a move is {} (SANTRAL RESHARD STATUS); reload once it has ended, or ABORT it first",
        reshard_state_name(driver_.state())));
  return reading;
}

// Alone: a map that moves keys is planned as a move; anything else is in force at once.
void ConfigReloads::alone(const std::string& why, const std::function<void(ReloadResult)>& done) {
  auto reading = read(why);
  if (!reading.error.empty()) return done({false, reading.error});
  const auto serving = host_.serving();
  std::vector<std::string> kept = keep_restart_settings(*serving->config, reading.next);
  put_tls_in_force(reading.tls);
  auto version = host_.next_version();
  auto topology = std::make_shared<placement::Topology>(
      *placement::make_topology(std::move(reading.next), version));
  topology->salt_naming = serving->salt_naming;  // sub-keys keep their names
  auto change = placement::compare_placement(*serving->map, *topology->map);
  if (!placement::moving_units(*serving->map, *topology->map).empty() &&
      topology->config->distribution != config::Distribution::Random &&
      serving->config->distribution != config::Distribution::Random) {
    return driver_.plan(topology, reading.text, [this, why, done](bool ok, std::string message) {
      if (ok)
        spdlog::info("reload ({}): {}", why, message);
      else
        spdlog::error("reload ({}) rejected, still serving version {}: {}", why,
                      host_.serving()->version, message);
      done({ok, std::move(message)});
    });
  }
  if (driver_.planned()) {
    spdlog::info(
        "resharding: the planned move is dropped: a reload put back a map that moves "
        "nothing");
    driver_.abort([](const std::string&) {});
  }
  local_->set_in_force_text(reading.text);
  host_.put_in_force(topology);
  reloaded_(*topology->config);
  std::string message =
      fmt::format("version {}: {} shard{}; {}", version, topology->map->shard_count(),
                  topology->map->shard_count() == 1 ? "" : "s", change.summary());
  if (!kept.empty())
    message += fmt::format(" (needs a restart to change: {})", fmt::join(kept, ", "));
  spdlog::info("reloaded {} ({}): {}", source_.path.string(), why, message);
  done({true, message});
}

// In a fleet: the file's own settings apply here at once; its map, when it has changed since
// this router last read it, is proposed as the fleet's next version.
void ConfigReloads::in_fleet(const std::string& why,
                             const std::function<void(ReloadResult)>& done) {
  auto reading = read(why);
  if (!reading.error.empty()) return done({false, reading.error});
  const auto serving = host_.serving();
  auto kept = keep_restart_settings(*serving->config, reading.next);
  config::adopt_shared_map(reading.next, *serving->config);  // the fleet's map stays in force
  put_tls_in_force(reading.tls);
  auto topology = std::make_shared<placement::Topology>(
      *placement::make_topology(std::move(reading.next), host_.next_version()));
  topology->map_version = serving->map_version;
  topology->salt_naming = serving->salt_naming;
  host_.put_in_force(topology);
  reloaded_(*topology->config);
  std::string message = "this router's own settings reloaded";
  if (!kept.empty())
    message += fmt::format(" (needs a restart to change: {})", fmt::join(kept, ", "));
  spdlog::info("reloaded {} ({}): {}", source_.path.string(), why, message);
  if (!fleet_->file_map_is_new(reading.file_map))
    return done({true, fmt::format("{}; the file's map is not new: the fleet's version {} stays "
                                   "(santral map push FILE proposes a map)",
                                   message, serving->map_version)});
  fleet_->propose_map(reading.file_map, [message, done](const ReloadResult& proposed) {
    done({proposed.ok, message + "; " + proposed.message});
  });
}

bool ConfigReloads::already_read() const {
  try {
    return source_.read_text() == last_read_text_;
  } catch (const config::ConfigError&) {
    return false;
  }
}

void ConfigReloads::check_file() {
  std::error_code ec;
  auto time = std::filesystem::last_write_time(source_.path, ec);
  auto size = std::filesystem::file_size(source_.path, ec);
  if (ec) return;
  bool changed = file_time_ && (*file_time_ != time || file_size_ != size);
  file_time_ = time;
  file_size_ = size;
  if (changed && host_.serving()->config->watch_file && !already_read())
    reload("the file changed", {"file", "", ""}, nullptr);
}

}  // namespace santral::router
