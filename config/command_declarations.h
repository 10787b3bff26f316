#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// `commands:`: module or custom commands the shards' COMMAND INFO does not describe well
// enough (or at all), declared with where their keys are and their flags, as Envoy's
// custom_commands. Each becomes a learned command (protocol/learned_commands.h):
//
//   commands:
//     - name: json.set         # any case; not a command Santral already knows
//       first_key: 1           # the first key's position (0 or left out: no key)
//       last_key: 1            # the last key's; -1: the last argument (default: first_key)
//       key_step: 1            # 2 for key value key value ... (default 1)
//       numkeys_at: 0          # instead: a count of keys at this position, the keys after it
//       flags: [write]         # as COMMAND INFO prints them: readonly, write, fast, admin, ...
//       arity: -3              # as Redis: N exactly, -N at least N, with the name (default -1)
void read_commands(const YAML::Node& node, const YamlFields& fields, Config& config);

}  // namespace santral::config
