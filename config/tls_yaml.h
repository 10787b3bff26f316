#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `tls:` (the clients' side: listen, cert_file, key_file, ca_file, client_auth,
// protocols, ciphers, ciphersuites, handshake_timeout_ms).
void read_tls_server(const YAML::Node& node, const YamlFields& fields, TlsServerSettings& out);

// Reads `backend.tls:` (ca_file, cert_file, key_file, server_name, verify, protocols, ciphers,
// ciphersuites).
void read_tls_client(const YAML::Node& node, const YamlFields& fields, TlsClientSettings& out);

// After the whole file is read: what the TLS settings need of the rest (a listener, files that
// exist), with the file names made absolute.
void check_tls(const YAML::Node& root, Config& config, const ConfigErrors& errors);

}  // namespace santral::config
