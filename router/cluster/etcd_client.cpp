#include "router/cluster/etcd_client.h"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/http.hpp>

#include "config/config.h"

namespace santral::router {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace base64 = beast::detail::base64;
using nlohmann::json;

namespace {

std::string encode(std::string_view text) {
  std::string out(base64::encoded_size(text.size()), '\0');
  out.resize(base64::encode(out.data(), text.data(), text.size()));
  return out;
}

std::string decode(const std::string& text) {
  std::string out(base64::decoded_size(text.size()), '\0');
  out.resize(base64::decode(out.data(), text.data(), text.size()).first);
  return out;
}

// etcd's gateway writes 64-bit integers as strings and leaves out zeros and falses.
std::int64_t number(const json& object, const char* field) {
  auto found = object.find(field);
  if (found == object.end()) return 0;
  if (found->is_string()) return std::stoll(found->get<std::string>());
  return found->get<std::int64_t>();
}

// The end of the range of keys that start with `key`.
std::string prefix_end(std::string_view key) {
  std::string end(key);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(end.back() + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

EtcdKeyValue key_value(const json& kv) {
  return {decode(kv.value("key", "")), decode(kv.value("value", "")), number(kv, "create_revision"),
          number(kv, "mod_revision"), number(kv, "lease")};
}

std::int64_t revision_of(const json& reply) {
  auto header = reply.find("header");
  return header == reply.end() ? 0 : number(*header, "revision");
}

// The member's addresses: an IP address as it is; a name through the resolver, on a thread of
// its own, waited for at most `timeout` (a resolver that hangs must not stop the keepalives;
// the thread finishes on its own later). Empty: not resolved in time.
std::vector<asio::ip::tcp::endpoint> resolve(const config::Endpoint& endpoint,
                                             std::chrono::milliseconds timeout) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(endpoint.host, ec);
  if (!ec) return {asio::ip::tcp::endpoint(address, endpoint.port)};
  struct Lookup {
    std::mutex lock;
    std::condition_variable done;
    bool finished = false;
    std::vector<asio::ip::tcp::endpoint> found;
  };
  auto lookup = std::make_shared<Lookup>();
  std::thread([lookup, host = endpoint.host, port = std::to_string(endpoint.port)] {
    asio::io_context io;
    asio::ip::tcp::resolver resolver(io);
    boost::system::error_code error;
    auto results = resolver.resolve(host, port, error);
    std::lock_guard guard(lookup->lock);
    if (!error)
      for (const auto& entry : results) lookup->found.push_back(entry.endpoint());
    lookup->finished = true;
    lookup->done.notify_all();
  }).detach();
  std::unique_lock guard(lookup->lock);
  lookup->done.wait_for(guard, timeout, [&] { return lookup->finished; });
  return lookup->found;
}

// Refused, timed out or failed in the middle: the member cannot answer; try the next one.
struct MemberFailed {
  std::string why;
  bool down;  // refused, silent once connected, or without a leader; false: out of reach
};

// A kept connection the member closed meanwhile (idle, or the member restarted): it fails
// before any byte of an answer arrives, and a new connection is tried.
struct StaleConnection {};

}  // namespace

// A connection to one member, kept open between calls: a router calls etcd several times a
// second, and a connection per call left thousands of sockets in TIME_WAIT.
struct EtcdConnection {
  asio::io_context io;
  beast::tcp_stream stream{io};
};

namespace {

// Refused, or connected and then silent (a member without quorum, or stopped, still accepts
// connections): that member cannot be serving anyone. A connection that cannot even be made
// in time may be a partition between this router and an etcd that works for others.
std::unique_ptr<EtcdConnection> connect(const std::string& member,
                                        std::chrono::milliseconds timeout) {
  config::Endpoint endpoint;
  if (!config::parse_endpoint(member, endpoint)) throw MemberFailed{"not host:port", false};
  auto endpoints = resolve(endpoint, timeout);
  if (endpoints.empty()) throw MemberFailed{"its name does not resolve in time", false};
  auto connection = std::make_unique<EtcdConnection>();
  beast::error_code ec;
  connection->stream.expires_after(timeout);
  connection->stream.async_connect(endpoints, [&](beast::error_code e, const auto&) { ec = e; });
  connection->io.run();
  connection->io.restart();
  if (ec) throw MemberFailed{ec.message(), ec == asio::error::connection_refused};
  return connection;
}

// One request and its response on `connection`. On a kept connection (`reused`), a failure
// before any byte of the answer is a StaleConnection.
http::response<http::string_body> exchange(EtcdConnection& connection, const std::string& member,
                                           std::string_view path, const std::string& body,
                                           std::chrono::milliseconds timeout, bool reused) {
  beast::error_code ec;
  std::size_t received = 0;
  auto wait = [&] {
    connection.io.run();
    connection.io.restart();
    if (!ec) return;
    bool before_answer = ec == asio::error::eof || ec == asio::error::connection_reset ||
                         ec == asio::error::broken_pipe || ec == http::error::end_of_stream;
    if (reused && received == 0 && before_answer) throw StaleConnection{};
    throw MemberFailed{ec.message(), true};  // connected, then refused or silent
  };
  http::request<http::string_body> request{http::verb::post, std::string(path), 11};
  request.set(http::field::host, member);
  request.set(http::field::content_type, "application/json");
  request.keep_alive(true);
  request.body() = body;
  request.prepare_payload();
  connection.stream.expires_after(timeout);
  http::async_write(connection.stream, request, [&](beast::error_code e, std::size_t) { ec = e; });
  wait();
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  connection.stream.expires_after(timeout);
  http::async_read(connection.stream, buffer, response,
                   [&](beast::error_code e, std::size_t bytes) {
                     ec = e;
                     received = bytes;
                   });
  wait();
  return response;
}

}  // namespace

EtcdClient::EtcdClient(std::vector<std::string> members, std::chrono::milliseconds timeout)
    : members_(std::move(members)), timeout_(timeout) {}

EtcdClient::~EtcdClient() = default;

json EtcdClient::call_member(const std::string& member, std::string_view path,
                             const std::string& body) {
  auto& kept = connections_[member];
  http::response<http::string_body> response;
  try {
    if (kept) {
      try {
        ++sends_;
        response = exchange(*kept, member, path, body, timeout_, true);
      } catch (const StaleConnection&) {
        kept.reset();
      }
    }
    if (!kept) {
      kept = connect(member, timeout_);
      ++sends_;
      response = exchange(*kept, member, path, body, timeout_, false);
    }
  } catch (...) {
    kept.reset();
    throw;
  }
  if (!response.keep_alive()) kept.reset();
  json reply = json::parse(response.body(), nullptr, false);
  if (reply.is_discarded())
    throw MemberFailed{"answered " + std::to_string(response.result_int()) + " with no JSON",
                       false};
  if (response.result() != http::status::ok || reply.contains("error")) {
    // The gateway's error ({"error": "etcdserver: no leader", "code": 14, ...}).
    std::string message = reply.value("message", reply.value("error", std::string("error")));
    // Only etcd without a leader (gRPC's Unavailable, 14) counts as etcd being down; another
    // error (a lease not found, ...) is an answer.
    bool leaderless = reply.value("code", 0) == 14 ||
                      message.find("no leader") != std::string::npos ||
                      message.find("leader changed") != std::string::npos;
    throw MemberFailed{message, leaderless};
  }
  return reply;
}

json EtcdClient::call(std::string_view path, const json& body) {
  sends_ = 0;
  std::string text = body.dump();
  std::string failures;
  bool all_down = true;
  for (std::size_t tried = 0; tried < members_.size(); ++tried) {
    std::size_t index = (preferred_ + tried) % members_.size();
    try {
      json reply = call_member(members_[index], path, text);
      preferred_ = index;
      return reply;
    } catch (const MemberFailed& failed) {
      all_down = all_down && failed.down;
      failures += (failures.empty() ? "" : "; ") + members_[index] + ": " + failed.why;
    }
  }
  throw EtcdUnavailable(failures, all_down);
}

EtcdRange EtcdClient::range(std::string_view key, bool prefix) {
  json body = {{"key", encode(key)}};
  if (prefix) body["range_end"] = encode(prefix_end(key));
  json reply = call("/v3/kv/range", body);
  EtcdRange out;
  out.revision = revision_of(reply);
  if (auto kvs = reply.find("kvs"); kvs != reply.end())
    for (const auto& kv : *kvs) out.kvs.push_back(key_value(kv));
  return out;
}

std::int64_t EtcdClient::put(std::string_view key, std::string_view value, std::int64_t lease) {
  json body = {{"key", encode(key)}, {"value", encode(value)}};
  if (lease != 0) body["lease"] = std::to_string(lease);
  return revision_of(call("/v3/kv/put", body));
}

std::optional<std::int64_t> EtcdClient::put_if(std::string_view key, std::string_view value,
                                               std::int64_t expected, std::int64_t lease) {
  return txn({{std::string(key), Compare::Target::ModRevision, expected, {}}},
             {{std::string(key), std::string(value), lease}}, {});
}

std::optional<std::int64_t> EtcdClient::txn(const std::vector<Compare>& compares,
                                            const std::vector<Put>& puts,
                                            const std::vector<std::string>& deletes) {
  json compare = json::array();
  for (const auto& c : compares) {
    json one = {{"key", encode(c.key)}, {"result", "EQUAL"}};
    switch (c.target) {
      case Compare::Target::ModRevision:
        one["target"] = "MOD";
        one["mod_revision"] = std::to_string(c.revision);
        break;
      case Compare::Target::CreateRevision:
        one["target"] = "CREATE";
        one["create_revision"] = std::to_string(c.revision);
        break;
      case Compare::Target::Value:
        one["target"] = "VALUE";
        one["value"] = encode(c.value);
        break;
      case Compare::Target::Lease:
        one["target"] = "LEASE";
        one["lease"] = std::to_string(c.revision);
        break;
    }
    compare.push_back(std::move(one));
  }
  json success = json::array();
  for (const auto& put : puts) {
    json request = {{"key", encode(put.key)}, {"value", encode(put.value)}};
    if (put.lease != 0) request["lease"] = std::to_string(put.lease);
    success.push_back({{"request_put", request}});
  }
  for (const auto& key : deletes)
    success.push_back({{"request_delete_range", {{"key", encode(key)}}}});
  json reply = call("/v3/kv/txn", {{"compare", compare}, {"success", success}});
  if (reply.value("succeeded", false)) return revision_of(reply);
  if (sends_ < 2) return std::nullopt;
  // Sent again: the first send may have been applied, and this one then failed its compare
  // against that very write. Read back what the txn would have made.
  std::int64_t made = 0;
  for (const auto& put : puts) {
    auto now = range(put.key);
    if (now.kvs.empty() || now.kvs.front().value != put.value) return std::nullopt;
    made = std::max(made, now.kvs.front().mod_revision);
  }
  for (const auto& key : deletes) {
    auto now = range(key);
    if (!now.kvs.empty()) return std::nullopt;
    if (puts.empty()) made = std::max(made, now.revision);
  }
  return made;
}

void EtcdClient::erase(std::string_view key) {
  call("/v3/kv/deleterange", {{"key", encode(key)}});
}

std::int64_t EtcdClient::grant_lease(std::chrono::seconds ttl) {
  json reply = call("/v3/lease/grant", {{"TTL", std::to_string(ttl.count())}});
  return number(reply, "ID");
}

bool EtcdClient::keep_alive(std::int64_t lease) {
  json reply = call("/v3/lease/keepalive", {{"ID", std::to_string(lease)}});
  auto result = reply.find("result");
  return result != reply.end() && number(*result, "TTL") > 0;
}

void EtcdClient::revoke(std::int64_t lease) {
  call("/v3/lease/revoke", {{"ID", std::to_string(lease)}});
}

std::vector<std::string> EtcdClient::member_list() {
  json reply = call("/v3/cluster/member/list", json::object());
  std::vector<std::string> members;
  for (const auto& member : reply.value("members", json::array())) {
    for (const auto& url : member.value("clientURLs", json::array())) {
      // http://127.0.0.1:2379 -> 127.0.0.1:2379
      std::string text = url.get<std::string>();
      if (auto scheme = text.find("://"); scheme != std::string::npos)
        text = text.substr(scheme + 3);
      if (!text.empty() && text.back() == '/') text.pop_back();
      members.push_back(std::move(text));
      break;  // one address per member
    }
  }
  return members;
}

std::optional<bool> EtcdClient::leaderless(const std::string& member) {
  try {
    json reply = call_member(member, "/v3/maintenance/status", "{}");
    // A member id is a 64-bit unsigned number (as a string in JSON): only its zero matters.
    auto leader = reply.find("leader");
    if (leader == reply.end()) return true;
    if (leader->is_string()) return leader->get<std::string>() == "0";
    return leader->is_number() && leader->get<double>() == 0;
  } catch (const MemberFailed& failed) {
    // A member that says so in words ("no leader") answered too.
    if (failed.why.find("no leader") != std::string::npos) return true;
    return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;  // an answer this client cannot read proves nothing
  }
}

}  // namespace santral::router
