#include "tests/support/config_text.h"

#include <catch2/catch.hpp>

#include "config/config_error.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

const std::string kTwoShards =
    "shards:\n"
    "  - name: a\n"
    "    address: 127.0.0.1:7001\n"
    "  - name: b\n"
    "    address: 127.0.0.1:7002\n";

config::Config load_config_text(const std::string& text, const std::string& name) {
  TempDir dir;
  return config::load_config(dir.write(name, text));
}

void check_config_errors(std::initializer_list<ConfigErrorCase> cases) {
  for (const auto& c : cases) {
    std::string text = kTwoShards + c.text;
    INFO(text);
    try {
      load_config_text(text, "bad.yaml");
      FAIL("config loaded but should have been rejected");
    } catch (const config::ConfigError& e) {
      std::string what = e.what();
      INFO(what);
      CHECK(e.line() == c.line);
      CHECK(e.key() == c.key);
      CHECK(what.find("bad.yaml:" + std::to_string(c.line)) != std::string::npos);
      CHECK(what.find(c.says) != std::string::npos);
    }
  }
}

}  // namespace santral::test
