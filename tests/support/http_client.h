#pragma once

#include <string>

#include "tests/support/redis_client.h"

namespace santral::test {

struct HttpResponse {
  int status = 0;
  std::string headers;
  std::string body;
};

// One HTTP/1.1 request to 127.0.0.1:port ("Connection: close"), for the admin API tests.
HttpResponse http_request(int port, const std::string& method, const std::string& target,
                          const std::string& bearer_token = "");

// The same in two steps: the request is sent when this is made and read by response(), so that
// it can wait in the socket of a server that is paused (SIGSTOP) and be the first thing it
// reads on waking.
class HttpExchange {
 public:
  HttpExchange(int port, const std::string& method, const std::string& target,
               const std::string& bearer_token = "");
  // Throws when no complete HTTP response came within `timeout_ms`.
  HttpResponse response(int timeout_ms = 10000);

 private:
  RawConnection connection_;
};

// The same over HTTPS, with curl verifying the server against `ca_file`. status is 0 when no
// HTTP answer came (e.g. the TLS handshake failed); body then says curl's reason.
HttpResponse https_request(int port, const std::string& method, const std::string& target,
                           const std::string& bearer_token, const std::string& ca_file);

}  // namespace santral::test
