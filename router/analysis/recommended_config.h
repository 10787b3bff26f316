#pragma once

#include <string>
#include <string_view>

#include "config/config.h"

namespace santral::router {

// A namespace entry as a config file writes it (`namespaces:` item, YAML), shards by name.
std::string namespace_yaml(const config::NamespaceConfig& table, const config::Config& config);

// The config file's text with the namespace named like `table` replaced by it (its strategy,
// shard key and table; other settings kept), written out again by yaml-cpp: the data is the
// same, comments and layout are not kept. Empty when the text has no such namespace.
std::string recommended_config_text(std::string_view text, const config::NamespaceConfig& table,
                                    const config::Config& config);

}  // namespace santral::router
