#include "config/config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "config/config_error.h"
#include "config/loaders.h"

namespace santral::config {

Config load_config(const std::filesystem::path& path, ConfigFormat format, const std::string& pool) {
  ConfigErrors errors(path);
  std::ifstream in(path);
  if (!in) errors.at_line(0, "", "cannot open the file (" + std::string(std::strerror(errno)) + ")");
  std::stringstream text;
  text << in.rdbuf();

  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    errors.at_line(e.mark.line + 1, "", "not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) errors.at_line(1, "", "expected a YAML mapping (key: value lines)");

  if (format == ConfigFormat::Auto)
    format = looks_like_twemproxy(root) ? ConfigFormat::Twemproxy : ConfigFormat::Santral;
  Config config = format == ConfigFormat::Twemproxy ? read_twemproxy_yaml(root, errors, pool)
                                                    : read_santral_yaml(root, errors);
  config.source = path;
  return config;
}

}  // namespace santral::config
