#include "config/namespace/namespace_config.h"

namespace santral::config {

std::string_view strategy_name(Strategy strategy) {
  switch (strategy) {
    case Strategy::Hashed:
      return "hashed";
    case Strategy::Slots:
      return "slots";
    case Strategy::Range:
      return "range";
    case Strategy::Directory:
      return "directory";
    case Strategy::Zone:
      return "zone";
  }
  return "hashed";
}

}  // namespace santral::config
