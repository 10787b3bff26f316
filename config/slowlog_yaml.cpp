#include "config/slowlog_yaml.h"

namespace santral::config {

void read_slowlog(const YAML::Node& node, const YamlFields& fields, SlowLogSettings& out) {
  static constexpr std::string_view kKeys[] = {"threshold_us", "max_len"};
  if (!node.IsMap())
    fields.errors().at(node, "slowlog",
                       "expected a map: {threshold_us: 10000, max_len: 128} (a negative "
                       "threshold_us keeps no request)");
  fields.only_keys(node, "slowlog", kKeys);
  if (node["threshold_us"])
    out.threshold_us = fields.integer(node["threshold_us"], "slowlog.threshold_us", -1,
                                      std::int64_t{3600} * 1000 * 1000);
  if (node["max_len"])
    out.max_len =
        static_cast<std::uint32_t>(fields.integer(node["max_len"], "slowlog.max_len", 0, 100000));
}

}  // namespace santral::config
