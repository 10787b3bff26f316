#include "config/audit_yaml.h"

namespace santral::config {

void read_audit(const YAML::Node& node, const YamlFields& fields, AuditSettings& out) {
  static constexpr std::string_view kKeys[] = {"path", "max_bytes", "max_files"};
  if (!node.IsMap())
    fields.errors().at(node, "audit",
                       "expected a map: {path: <file, or stderr>, max_bytes: 64mb, max_files: 5}");
  fields.only_keys(node, "audit", kKeys);
  out.line = node.Mark().line + 1;
  if (!node["path"])
    fields.errors().at(node, "audit.path",
                       "missing: the file the audit log is written to, or stderr (leave out "
                       "audit: for no audit log)");
  out.path = fields.string(node["path"], "audit.path");
  if (out.path.empty())
    fields.errors().at(node["path"], "audit.path",
                       "must not be empty: a file, or stderr (leave out audit: for no audit log)");
  if (node["max_bytes"]) {
    out.max_bytes = fields.bytes(node["max_bytes"], "audit.max_bytes");
    if (out.max_bytes < 4096)
      fields.errors().at(node["max_bytes"], "audit.max_bytes",
                         "must be at least 4kb: the file is rotated past this size");
  }
  if (node["max_files"])
    out.max_files =
        static_cast<std::uint32_t>(fields.integer(node["max_files"], "audit.max_files", 1, 1000));
}

}  // namespace santral::config
