#include "config/acl/users_yaml.h"

#include "config/acl/acl_rules.h"
#include "config/acl/password_hash.h"

namespace santral::config {

std::string read_user_name(const YAML::Node& item, const YamlFields& fields,
                           const std::string& key) {
  static constexpr std::string_view kKeys[] = {"name", "password", "password_sha256", "rules",
                                               "limits"};
  fields.only_keys(item, key, kKeys);
  if (!item["name"]) fields.errors().at(item, key, "every user needs a name");
  std::string name = fields.string(item["name"], key + ".name");
  if (name.empty() || name.find_first_of(" \t\r\n") != std::string::npos)
    fields.errors().at(item["name"], key + ".name", "a user's name must be one word, not empty");
  return name;
}

Permissions read_user_permissions(const YAML::Node& item, const YamlFields& fields,
                                  const std::string& key) {
  Permissions user = item["rules"] ? new_acl_user() : unrestricted_acl_user();
  if (item["rules"]) {
    std::string error = apply_acl_rules(user, fields.string(item["rules"], key + ".rules"));
    if (!error.empty()) fields.errors().at(item["rules"], key + ".rules", error);
  }
  if (item["password"] && item["password_sha256"])
    fields.errors().at(item["password_sha256"], key + ".password_sha256",
                       "give a password or its SHA-256, not both");
  if (item["password"]) {
    std::string password = fields.string(item["password"], key + ".password");
    if (password.empty())
      fields.errors().at(item["password"], key + ".password", "must not be empty");
    apply_acl_rule(user, ">" + password);
  }
  if (item["password_sha256"]) {
    auto hash =
        parse_password_hash(fields.string(item["password_sha256"], key + ".password_sha256"));
    if (!hash)
      fields.errors().at(item["password_sha256"], key + ".password_sha256",
                         "expected 64 lower-case hexadecimal digits (the password's SHA-256)");
    user.passwords.push_back(*hash);
    user.nopass = false;
  }
  if (!item["rules"] && !item["password"] && !item["password_sha256"])
    fields.errors().at(item, key,
                       "every user needs a password (or rules: with >password or nopass)");
  return user;
}

}  // namespace santral::config
