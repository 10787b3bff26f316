#pragma once

#include <span>
#include <string>
#include <string_view>

#include "config/config.h"

namespace santral::config {

// What of a namespace's entry a rewrite replaces: only its table (`ranges:`, `slots:` or
// `groups:`, as the balancer cuts and moves them), or its whole placement (strategy, shard key
// and table, the keys of other strategies removed: SANTRAL ANALYZE's recommendation).
enum class TableScope { Table, Placement };

// The config file's text with the entry of each of `tables`' namespaces (by name) rewritten,
// shards by name, written out again by yaml-cpp: the data is the same, comments and layout are
// not kept. Empty when the text holds none of them (a twemproxy-style file has no namespaces).
std::string with_tables(std::string_view text, const Config& config,
                        std::span<const NamespaceConfig> tables, TableScope scope);

// One namespace's entry alone, as a `namespaces:` list of one (config lines to show).
std::string namespace_entry_yaml(const NamespaceConfig& table, const Config& config);

}  // namespace santral::config
