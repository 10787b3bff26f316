#include "tests/support/http_client.h"

#include <stdexcept>

#include "tests/support/redis_client.h"

namespace santral::test {

HttpResponse http_request(int port, const std::string& method, const std::string& target,
                          const std::string& bearer_token) {
  RawConnection connection(port);
  std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!bearer_token.empty()) request += "Authorization: Bearer " + bearer_token + "\r\n";
  if (method == "POST") request += "Content-Length: 0\r\n";
  connection.send(request + "\r\n");
  std::string raw;
  if (!connection.wait_closed(raw, 10000)) throw std::runtime_error("no complete HTTP response");
  HttpResponse response;
  auto end_of_headers = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end_of_headers == std::string::npos)
    throw std::runtime_error("not an HTTP response: " + raw.substr(0, 200));
  response.status = std::stoi(raw.substr(9, 3));
  response.headers = raw.substr(0, end_of_headers);
  response.body = raw.substr(end_of_headers + 4);
  return response;
}

}  // namespace santral::test
