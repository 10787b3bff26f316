#include "tests/support/certificates.h"

#include <sys/wait.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace santral::test {
namespace {

// Leaf extensions, one section per kind; `openssl x509 -req -extfile` and `openssl ca` read them.
// The [ca_*] sections make `openssl ca` work (it alone can set a start date in the past).
constexpr const char* kOpensslConfig = R"(
[req]
distinguished_name = req_dn
prompt = no
[req_dn]
CN = unused

[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[localhost]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
authorityKeyIdentifier = keyid

[wrong_host]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:wrong.example
authorityKeyIdentifier = keyid

[client]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth, serverAuth
authorityKeyIdentifier = keyid

[ca]
default_ca = test_ca
[test_ca]
dir = .
database = ca-index.txt
new_certs_dir = ca-issued
serial = ca-serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
)";

void openssl(const std::filesystem::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  // Process runs in the test's working directory: every path given to openssl is absolute, but
  // `openssl ca` resolves its database relative to the current directory, so it runs via sh.
  std::string command = "cd '" + dir.string() + "' &&";
  for (const auto& arg : args) command += " '" + arg + "'";
  Process process({"/bin/sh", "-c", command}, (dir / "openssl.log").string());
  int status = process.wait(30000);
  if (status == -1) status = process.terminate();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("openssl " + args.at(1) + " failed: " + process.log());
}

}  // namespace

TestCertificates::TestCertificates() {
  dir_.write("openssl.cnf", kOpensslConfig);
  dir_.write("ca-index.txt", "");
  dir_.write("ca-serial", "1000\n");
  std::filesystem::create_directory(dir() / "ca-issued");

  ca = make_ca("ca", "/CN=Santral Test CA");
  untrusted_ca = make_ca("untrusted-ca", "/CN=Untrusted Test CA");
  server = sign("server", "/CN=localhost", "localhost", ca);
  wrong_host = sign("wrong-host", "/CN=wrong.example", "wrong_host", ca);
  untrusted = sign("untrusted", "/CN=localhost", "localhost", untrusted_ca);
  client = sign("client", "/CN=santral-test-client", "client", ca);

  // Valid from 1 to 2 January 2020 only: `openssl x509` in OpenSSL 3.0 cannot back-date.
  auto request = make_request("expired", "/CN=localhost");
  expired = {dir() / "expired.crt", dir() / "expired.key"};
  openssl(dir(), {"ca",
                  "-batch",
                  "-notext",
                  "-config",
                  (dir() / "openssl.cnf").string(),
                  "-cert",
                  ca.cert_file.string(),
                  "-keyfile",
                  ca.key_file.string(),
                  "-in",
                  request.string(),
                  "-out",
                  expired.cert_file.string(),
                  "-extfile",
                  (dir() / "openssl.cnf").string(),
                  "-extensions",
                  "localhost",
                  "-startdate",
                  "20200101000000Z",
                  "-enddate",
                  "20200102000000Z"});
}

CertificateFiles TestCertificates::make_ca(const std::string& name, const std::string& subject) {
  CertificateFiles files{dir() / (name + ".crt"), dir() / (name + ".key")};
  openssl(dir(), {"req",
                  "-x509",
                  "-new",
                  "-newkey",
                  "ec",
                  "-pkeyopt",
                  "ec_paramgen_curve:prime256v1",
                  "-nodes",
                  "-config",
                  (dir() / "openssl.cnf").string(),
                  "-extensions",
                  "ca_ext",
                  "-subj",
                  subject,
                  "-days",
                  "3650",
                  "-keyout",
                  files.key_file.string(),
                  "-out",
                  files.cert_file.string()});
  return files;
}

std::filesystem::path TestCertificates::make_request(const std::string& name,
                                                     const std::string& subject) {
  auto request = dir() / (name + ".csr");
  openssl(dir(), {"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                  "-nodes", "-config", (dir() / "openssl.cnf").string(), "-subj", subject,
                  "-keyout", (dir() / (name + ".key")).string(), "-out", request.string()});
  return request;
}

CertificateFiles TestCertificates::sign(const std::string& name, const std::string& subject,
                                        const std::string& extensions, const CertificateFiles& by) {
  auto request = make_request(name, subject);
  CertificateFiles files{dir() / (name + ".crt"), dir() / (name + ".key")};
  openssl(dir(), {"x509", "-req", "-in", request.string(), "-CA", by.cert_file.string(), "-CAkey",
                  by.key_file.string(), "-CAcreateserial", "-days", "825", "-sha256", "-extfile",
                  (dir() / "openssl.cnf").string(), "-extensions", extensions, "-out",
                  files.cert_file.string()});
  return files;
}

}  // namespace santral::test
