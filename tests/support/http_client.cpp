#include "tests/support/http_client.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

HttpResponse http_request(int port, const std::string& method, const std::string& target,
                          const std::string& bearer_token) {
  return HttpExchange(port, method, target, bearer_token).response();
}

HttpExchange::HttpExchange(int port, const std::string& method, const std::string& target,
                           const std::string& bearer_token)
    : connection_(port) {
  std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!bearer_token.empty()) request += "Authorization: Bearer " + bearer_token + "\r\n";
  if (method == "POST") request += "Content-Length: 0\r\n";
  connection_.send(request + "\r\n");
}

HttpResponse HttpExchange::response(int timeout_ms) {
  std::string raw;
  if (!connection_.wait_closed(raw, timeout_ms))
    throw std::runtime_error("no complete HTTP response");
  HttpResponse response;
  auto end_of_headers = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end_of_headers == std::string::npos)
    throw std::runtime_error("not an HTTP response: " + raw.substr(0, 200));
  response.status = std::stoi(raw.substr(9, 3));
  response.headers = raw.substr(0, end_of_headers);
  response.body = raw.substr(end_of_headers + 4);
  return response;
}

HttpResponse https_request(int port, const std::string& method, const std::string& target,
                           const std::string& bearer_token, const std::string& ca_file) {
  TempDir dir;
  auto body = dir.path() / "body";
  auto headers = dir.path() / "headers";
  auto errors = dir.path() / "errors";
  std::vector<std::string> argv = {"curl",     "-sS",           "--max-time", "10",
                                   "--cacert", ca_file,         "-X",         method,
                                   "-o",       body.string(),   "-D",         headers.string(),
                                   "--stderr", errors.string(), "-w",         "%{http_code}"};
  if (!bearer_token.empty())
    argv.insert(argv.end(), {"-H", "Authorization: Bearer " + bearer_token});
  argv.push_back("https://127.0.0.1:" + std::to_string(port) + target);
  Process curl(argv, (dir.path() / "status").string());
  if (curl.wait(20000) == -1) curl.terminate();
  auto read = [](const std::filesystem::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  HttpResponse response;
  auto status = curl.log();
  response.status = status.size() >= 3 ? std::atoi(status.substr(status.size() - 3).c_str()) : 0;
  response.headers = read(headers);
  response.body = response.status == 0 ? read(errors) : read(body);
  return response;
}

}  // namespace santral::test
