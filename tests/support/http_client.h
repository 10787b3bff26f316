#pragma once

#include <string>

namespace santral::test {

struct HttpResponse {
  int status = 0;
  std::string headers;
  std::string body;
};

// One HTTP/1.1 request to 127.0.0.1:port ("Connection: close"), for the admin API tests.
HttpResponse http_request(int port, const std::string& method, const std::string& target,
                          const std::string& bearer_token = "");

// The same over HTTPS, with curl verifying the server against `ca_file`. status is 0 when no
// HTTP answer came (e.g. the TLS handshake failed); body then says curl's reason.
HttpResponse https_request(int port, const std::string& method, const std::string& target,
                           const std::string& bearer_token, const std::string& ca_file);

}  // namespace santral::test
