#include "config/config_error.h"

#include <yaml-cpp/yaml.h>

namespace santral::config {
namespace {

std::string located(const std::filesystem::path& file, int line, const std::string& key,
                    const std::string& problem) {
  std::string text = file.string();
  if (line > 0) text += ":" + std::to_string(line);
  text += ": ";
  if (!key.empty()) text += key + ": ";
  return text + problem;
}

}  // namespace

ConfigError::ConfigError(const std::filesystem::path& file, int line, const std::string& key,
                         const std::string& problem)
    : std::runtime_error(located(file, line, key, problem)), file_(file), line_(line), key_(key) {}

void ConfigErrors::at(const YAML::Node& node, const std::string& key,
                      const std::string& problem) const {
  int line = node.IsDefined() ? node.Mark().line + 1 : 0;
  throw ConfigError(file_, line, key, problem);
}

void ConfigErrors::at_line(int line, const std::string& key, const std::string& problem) const {
  throw ConfigError(file_, line, key, problem);
}

}  // namespace santral::config
