#include "router/process/config_source.h"

#include <fstream>
#include <iterator>

#include "config/config_error.h"
#include "router/backend/sentinel_lookup.h"

namespace santral::router {

config::Config ConfigSource::load() const {
  return parse(read_text());
}

std::string ConfigSource::read_text() const {
  std::ifstream in(path);
  if (!in) throw config::ConfigError(path.string(), 0, "", "cannot read the file");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

config::Config ConfigSource::parse(const std::string& text) const {
  config::Config config = config::parse_config(text, path, format, pool);
  resolve_sentinel_shards(config);  // the primaries and replicas Sentinel names, asked now
  if (workers) config.workers = *workers;
  if (log_level) config.log_level = *log_level;
  auto endpoint = [](const std::string& text, std::string_view option) {
    config::Endpoint out;
    if (!config::parse_endpoint(text, out))
      throw config::ConfigError("command line", 0, std::string(option),
                                "expected host:port, got '" + text + "'");
    return out;
  };
  if (listen) {
    config.listen = endpoint(*listen, "--listen");
    config.plain_listener = true;
  }
  if (admin_listen) config.admin.listen = endpoint(*admin_listen, "--admin-listen");
  if (announce) {
    config.announce = endpoint(*announce, "--announce");
    if (config.announce->port == 0)
      throw config::ConfigError("command line", 0, "--announce",
                                "expected the host:port clients connect to");
  }
  return config;
}

std::vector<std::string> keep_restart_settings(const config::Config& current,
                                               config::Config& next) {
  std::vector<std::string> kept;
  if (next.listen.text() != current.listen.text()) {
    kept.push_back("listen stays " + current.listen.text());
    next.listen = current.listen;
  }
  if (next.workers != current.workers) {
    kept.push_back("workers stays " + std::to_string(current.workers));
    next.workers = current.workers;
  }
  if (next.plain_listener != current.plain_listener ||
      next.tls.listen_host != current.tls.listen_host ||
      next.tls.listen_port != current.tls.listen_port) {
    kept.emplace_back("the listeners (listen, tls.listen) stay as they are");
    next.plain_listener = current.plain_listener;
    next.tls.listen_host = current.tls.listen_host;
    next.tls.listen_port = current.tls.listen_port;
  }
  if (next.admin.listen.text() != current.admin.listen.text()) {
    kept.push_back("admin.listen stays " + current.admin.listen.text());
    next.admin.listen = current.admin.listen;
  }
  // The audit log is opened once: a reload can neither switch it off nor move it.
  if (!(next.audit == current.audit)) {
    kept.emplace_back("audit stays as it is");
    next.audit = current.audit;
  }
  if (next.cluster.etcd != current.cluster.etcd || next.cluster.name != current.cluster.name ||
      next.cluster.router != current.cluster.router) {
    kept.emplace_back("cluster stays as it is");
    next.cluster = current.cluster;
  }
  return kept;
}

}  // namespace santral::router
