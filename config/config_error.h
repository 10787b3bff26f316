#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace YAML {
class Node;
}

namespace santral::config {

// A config problem, located: "<file>:<line>: <key>: <what was expected>".
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::filesystem::path& file, int line, const std::string& key,
              const std::string& problem);

  const std::filesystem::path& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }

 private:
  std::filesystem::path file_;
  int line_;
  std::string key_;
};

// Raises errors at the position of YAML nodes of one file.
class ConfigErrors {
 public:
  explicit ConfigErrors(std::filesystem::path file) : file_(std::move(file)) {}
  [[noreturn]] void at(const YAML::Node& node, const std::string& key,
                       const std::string& problem) const;
  [[noreturn]] void at_line(int line, const std::string& key, const std::string& problem) const;
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
};

}  // namespace santral::config
