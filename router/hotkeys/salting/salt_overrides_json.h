#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "router/hotkeys/salting/salt_table.h"

namespace santral::router {

// Run-time salting as a fleet shares it in etcd (/santral/<name>/salting), and as a router
// alone keeps it in hotkeys.state_file:
//   {"format": 1, "keys": {"hits": {"salts": 8, "reply": "estimate", "by": "command"},
//                          "cold": null}}
// null: UNSALT took the key out of salting (the config's, or a pattern's).
std::string encode_salt_overrides(const SaltOverrides& overrides);

struct DecodedSalting {
  std::shared_ptr<const SaltOverrides> overrides;  // nullptr when refused
  std::string error;                               // names `where` and the field
};
// `where`: what the document was read from, for the error ("etcd key /santral/p/salting").
DecodedSalting decode_salt_overrides(std::string_view where, const std::string& value);

// One SANTRAL SALT / UNSALT (or automatic) change, to be made on the fleet's latest document.
struct SaltChange {
  std::string key;
  std::optional<SaltOverrides::Salting> salting;  // nullopt: not salted
  bool forget = false;                            // drop the key's entry: as the config says
};
// `document` (empty: none yet) with `change` made; what the fleet's compare-and-swap writes.
std::string apply_salt_change(const std::string& document, const SaltChange& change);

}  // namespace santral::router
