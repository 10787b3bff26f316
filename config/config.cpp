#include "config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <boost/asio/ip/address.hpp>

#include "config/config_error.h"
#include "config/loaders.h"

namespace santral::config {

Config parse_config(const std::string& text, const std::filesystem::path& source,
                    ConfigFormat format, const std::string& pool) {
  ConfigErrors errors(source);
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) errors.at_line(1, "", "expected a YAML mapping (key: value lines)");
    if (format == ConfigFormat::Auto)
      format = looks_like_twemproxy(root) ? ConfigFormat::Twemproxy : ConfigFormat::Santral;
    Config config = format == ConfigFormat::Twemproxy ? read_twemproxy_yaml(root, errors, pool)
                                                      : read_santral_yaml(root, errors);
    config.source = source;
    return config;
  } catch (const YAML::ParserException& e) {
    errors.at_line(e.mark.line + 1, "", "not valid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    // Anything else yaml-cpp can object to (a key that is a list, say) is still the file's
    // fault, and still gets a location.
    errors.at_line(e.mark.is_null() ? 0 : e.mark.line + 1, "", "unexpected YAML: " + e.msg);
  }
}

std::optional<std::string> admin_exposure_error(const Admin& admin) {
  if (admin.listen.port == 0 || !admin.token.empty() || admin.allow_remote_without_token)
    return std::nullopt;
  const std::string& host = admin.listen.host;
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  if (host == "localhost" || (!ec && address.is_loopback())) return std::nullopt;
  return "the admin API changes and reloads the cluster: beyond loopback (" + host +
         ") it needs admin.token, or admin.allow_remote_without_token: true";
}

Config load_config(const std::filesystem::path& path, ConfigFormat format,
                   const std::string& pool) {
  std::ifstream in(path);
  if (!in)
    ConfigErrors(path).at_line(0, "",
                               "cannot open the file (" + std::string(std::strerror(errno)) + ")");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path, format, pool);
}

bool Config::confirms_writes() const {
  return write_concern.replicas > 0 ||
         std::any_of(namespaces.begin(), namespaces.end(), [](const NamespaceConfig& ns) {
           return ns.write_concern && ns.write_concern->replicas > 0;
         });
}

LostWritesPolicy Config::lost_writes_policy() const {
  if (failover.on_lost_writes) return *failover.on_lost_writes;
  return confirms_writes() ? LostWritesPolicy::Refuse : LostWritesPolicy::Accept;
}

}  // namespace santral::config
