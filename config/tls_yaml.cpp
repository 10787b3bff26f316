#include "config/tls_yaml.h"

#include <fstream>

namespace santral::config {

namespace {

void read_protocols(const YAML::Node& node, const YamlFields& fields, const std::string& path,
                    TlsProtocols& out) {
  if (const auto& versions = node["protocols"]) {
    if (!versions.IsSequence() || versions.size() == 0)
      fields.errors().at(versions, path + ".protocols",
                         "expected a list of TLS versions: [TLSv1.2, TLSv1.3]");
    for (std::size_t i = 0; i < versions.size(); ++i) {
      std::string version =
          fields.string(versions[i], path + ".protocols[" + std::to_string(i) + "]");
      if (version != "TLSv1.2" && version != "TLSv1.3")
        fields.errors().at(versions[i], path + ".protocols",
                           "'" + version + "' is not offered: expected TLSv1.2 or TLSv1.3");
      out.versions.push_back(version);
    }
  }
  if (node["ciphers"]) out.ciphers = fields.string(node["ciphers"], path + ".ciphers");
  if (node["ciphersuites"])
    out.ciphersuites = fields.string(node["ciphersuites"], path + ".ciphersuites");
}

ClientAuth client_auth(const YAML::Node& node, const YamlFields& fields) {
  std::string value = fields.string(node, "tls.client_auth");
  if (value == "none" || value == "no") return ClientAuth::None;
  if (value == "optional") return ClientAuth::Optional;
  if (value == "required" || value == "yes") return ClientAuth::Required;
  fields.errors().at(node, "tls.client_auth",
                     "expected none, optional or required (a client certificate signed by "
                     "tls.ca_file)");
}

// A file the settings name: made absolute (relative to the config file) and checked readable.
void resolve(std::filesystem::path& file, const YAML::Node& node, const std::string& key,
             const ConfigErrors& errors) {
  if (file.empty()) return;
  if (file.is_relative()) file = errors.file().parent_path() / file;
  std::ifstream in(file);
  if (!in) errors.at(node, key, "cannot read " + file.string());
}

}  // namespace

void read_tls_server(const YAML::Node& node, const YamlFields& fields, TlsServerSettings& out) {
  static constexpr std::string_view kKeys[] = {"listen",  "cert_file",    "key_file",
                                               "ca_file", "client_auth",  "protocols",
                                               "ciphers", "ciphersuites", "handshake_timeout_ms"};
  if (!node.IsMap())
    fields.errors().at(node, "tls", "expected a map with listen, cert_file and key_file");
  fields.only_keys(node, "tls", kKeys);
  out.enabled = true;
  if (node["listen"]) {
    Endpoint listen = fields.endpoint(node["listen"], "tls.listen");
    out.listen_host = listen.host;
    out.listen_port = listen.port;
  }
  if (node["cert_file"]) out.cert_file = fields.string(node["cert_file"], "tls.cert_file");
  if (node["key_file"]) out.key_file = fields.string(node["key_file"], "tls.key_file");
  if (node["ca_file"]) out.ca_file = fields.string(node["ca_file"], "tls.ca_file");
  if (node["client_auth"]) out.client_auth = client_auth(node["client_auth"], fields);
  if (node["handshake_timeout_ms"])
    out.handshake_timeout = fields.millis(node["handshake_timeout_ms"], "tls.handshake_timeout_ms");
  read_protocols(node, fields, "tls", out.protocols);
  if (out.cert_file.empty() || out.key_file.empty())
    fields.errors().at(node, "tls", "needs cert_file and key_file (PEM files)");
  if (out.client_auth != ClientAuth::None && out.ca_file.empty())
    fields.errors().at(node["client_auth"], "tls.client_auth",
                       "needs tls.ca_file: the CA that signs the clients' certificates");
}

void read_tls_client(const YAML::Node& node, const YamlFields& fields, TlsClientSettings& out) {
  static constexpr std::string_view kKeys[] = {"ca_file", "cert_file", "key_file", "server_name",
                                               "verify",  "protocols", "ciphers",  "ciphersuites"};
  if (!node.IsMap())
    fields.errors().at(node, "backend.tls",
                       "expected a map with ca_file, cert_file, key_file, server_name, verify");
  fields.only_keys(node, "backend.tls", kKeys);
  if (node["ca_file"]) out.ca_file = fields.string(node["ca_file"], "backend.tls.ca_file");
  if (node["cert_file"]) out.cert_file = fields.string(node["cert_file"], "backend.tls.cert_file");
  if (node["key_file"]) out.key_file = fields.string(node["key_file"], "backend.tls.key_file");
  if (node["server_name"])
    out.server_name = fields.string(node["server_name"], "backend.tls.server_name");
  if (node["verify"]) out.verify = fields.boolean(node["verify"], "backend.tls.verify");
  read_protocols(node, fields, "backend.tls", out.protocols);
  if (out.cert_file.empty() != out.key_file.empty())
    fields.errors().at(node, "backend.tls",
                       "cert_file and key_file go together (a client certificate for the shards)");
}

void check_tls(const YAML::Node& root, Config& config, const ConfigErrors& errors) {
  auto& server = config.tls;
  if (server.enabled) {
    const YAML::Node& node = root["tls"];
    resolve(server.cert_file, node["cert_file"], "tls.cert_file", errors);
    resolve(server.key_file, node["key_file"], "tls.key_file", errors);
    resolve(server.ca_file, node["ca_file"], "tls.ca_file", errors);
    if (server.listen_port == 0 && !root["listen"] && !config.admin.tls)
      errors.at(node, "tls.listen",
                "missing: with no `listen:` either, Santral would not listen for clients");
    // `listen:` may be left out to serve TLS only, as Redis with `port 0` and a `tls-port`.
    if (server.listen_port != 0 && !root["listen"]) config.plain_listener = false;
  } else if (config.admin.tls) {
    errors.at(root["admin"]["tls"], "admin.tls",
              "needs the certificate of `tls:` (tls.cert_file, tls.key_file)");
  }
  auto& client = config.backend.tls;
  const YAML::Node& node = root["backend"] ? root["backend"]["tls"] : YAML::Node();
  if (node) {
    resolve(client.ca_file, node["ca_file"], "backend.tls.ca_file", errors);
    resolve(client.cert_file, node["cert_file"], "backend.tls.cert_file", errors);
    resolve(client.key_file, node["key_file"], "backend.tls.key_file", errors);
  }
}

}  // namespace santral::config
