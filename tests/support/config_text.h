#pragma once

#include <initializer_list>
#include <string>

#include "config/config.h"

namespace santral::test {

// Two shards, a (127.0.0.1:7001) and b (127.0.0.1:7002): the least a config needs. Five lines,
// so a setting appended to it starts on line 6.
extern const std::string kTwoShards;

// Writes `text` to a file `name` in a fresh temporary directory and loads it.
config::Config load_config_text(const std::string& text, const std::string& name = "santral.yaml");

// A config the loader must reject: the error names the file, `line` and `key`, and says `says`.
struct ConfigErrorCase {
  std::string text;
  int line;
  std::string key;
  std::string says;
};
// Checks each case, loaded as bad.yaml after kTwoShards.
void check_config_errors(std::initializer_list<ConfigErrorCase> cases);

}  // namespace santral::test
