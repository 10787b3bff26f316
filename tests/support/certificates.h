#pragma once

#include <filesystem>

#include "tests/support/temp_dir.h"

namespace santral::test {

// A certificate and the private key that goes with it (PEM files).
struct CertificateFiles {
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
};

// Certificates for TLS tests, made with the `openssl` command into a fresh temporary directory
// (EC P-256 keys, so it takes a fraction of a second). Every leaf certificate has both the
// serverAuth and clientAuth purposes, so any of them can also stand as a client's certificate.
//
//   ca            trusted test CA         signs: server, expired, wrong_host, client
//   untrusted_ca  a second, unrelated CA  signs: untrusted
class TestCertificates {
 public:
  TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  const std::filesystem::path& dir() const { return dir_.path(); }

  CertificateFiles ca;            // the CA's own certificate and key
  CertificateFiles untrusted_ca;  // a second CA nobody trusts unless told to
  CertificateFiles server;        // localhost: SAN DNS:localhost, IP:127.0.0.1; from `ca`
  CertificateFiles expired;       // as `server`, but valid only in January 2020
  CertificateFiles wrong_host;    // SAN DNS:wrong.example only; from `ca`
  CertificateFiles untrusted;     // as `server`, but signed by `untrusted_ca`
  CertificateFiles client;        // CN=santral-test-client; from `ca`, for mutual TLS

 private:
  CertificateFiles make_ca(const std::string& name, const std::string& subject);
  std::filesystem::path make_request(const std::string& name, const std::string& subject);
  CertificateFiles sign(const std::string& name, const std::string& subject,
                        const std::string& extensions, const CertificateFiles& by);

  TempDir dir_;
};

}  // namespace santral::test
