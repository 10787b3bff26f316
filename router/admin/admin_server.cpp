#include "router/admin/admin_server.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>
#include <string_view>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse_query.hpp>

#include "protocol/arguments.h"
#include "router/admin/admin_views.h"
#include "router/admin/cluster_snapshot.h"
#include "router/admin/dashboard_assets.h"
#include "router/admin/placement_view.h"
#include "router/admin/shard_info.h"
#include "router/analysis/shard_key_analysis.h"
#include "router/hotkeys/detection/hot_key_report.h"
#include "router/hotkeys/salting/salted_layout.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/worker_services.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// Whether a query string is one (RFC 3986: ^ [ ] { } | and backslash must be percent-encoded).
bool valid_query(std::string_view query) {
  return boost::urls::parse_query(query).has_value();
}

// A query string's parameter `name`, percent-decoded ('+' stays '+': a regex may hold one);
// nullopt when absent or when the query is not valid.
std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  auto params = boost::urls::parse_query(query);
  if (!params) return std::nullopt;
  for (const auto& param : *params)
    if (param.key.decode() == name && param.has_value) return param.value.decode();
  return std::nullopt;
}

// `count=N` in a query string, at most `limit`; `limit` when absent or not a number.
std::size_t count_in(std::string_view query, std::size_t limit) {
  auto digits = query_param(query, "count");
  if (!digits) return limit;
  std::size_t count = 0;
  auto [ptr, ec] = std::from_chars(digits->data(), digits->data() + digits->size(), count);
  if (ec == std::errc() && ptr == digits->data() + digits->size()) return std::min(count, limit);
  return limit;
}

// A number in (above, most] from a query parameter; `fallback` when absent, nullopt when bad.
std::optional<double> number_param(std::string_view query, std::string_view name, double fallback,
                                   double above, double most) {
  auto text = query_param(query, name);
  if (!text) return fallback;
  return protocol::parse_number_in(*text, above, most);
}

// Whether a request's Authorization header carries the token, in time that does not depend on
// where they differ (the digests are compared, so not even on the length).
bool bearer_matches(std::string_view header, const std::string& token) {
  constexpr std::string_view kBearer = "Bearer ";
  std::string_view given = header.starts_with(kBearer) ? header.substr(kBearer.size()) : "";
  unsigned char a[EVP_MAX_MD_SIZE];
  unsigned char b[EVP_MAX_MD_SIZE];
  unsigned int a_size = 0;
  unsigned int b_size = 0;
  EVP_Digest(given.data(), given.size(), a, &a_size, EVP_sha256(), nullptr);
  EVP_Digest(token.data(), token.size(), b, &b_size, EVP_sha256(), nullptr);
  return header.starts_with(kBearer) && a_size == b_size && CRYPTO_memcmp(a, b, a_size) == 0;
}

// One admin connection: read a request, answer it, repeat while the client keeps it alive.
// `Stream`: beast::tcp_stream, or HTTPS (admin.tls) over one.
template <typename Stream>
class AdminSession : public std::enable_shared_from_this<AdminSession<Stream>> {
 public:
  template <typename... Transport>
  AdminSession(ControlPlane& server, HealthProbes& probes, const std::string& token,
               tcp::socket socket, Transport&... transport)
      : stream_(std::move(socket), transport...), server_(server), probes_(probes), token_(token) {}

  void start() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      read();
    } else {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(10));
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (!ec) self->read();
                              });
    }
  }

 private:
  void read() {
    request_ = {};
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, request_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return;
                       self->handle();
                     });
  }

  void answer(http::status status, std::string body, std::string_view type = "application/json") {
    auto response = std::make_shared<Response>(status, request_.version());
    response->set(http::field::server, "santral");
    response->set(http::field::content_type, type);
    response->set(http::field::cache_control, "no-cache");
    if (type.starts_with("text/html")) {
      // The dashboard runs only its own script and talks only to this listener.
      response->set("Content-Security-Policy",
                    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src "
                    "'self'; img-src 'self' data:; frame-ancestors 'none'");
      response->set("X-Content-Type-Options", "nosniff");
    }
    response->keep_alive(request_.keep_alive());
    response->body() = std::move(body);
    response->prepare_payload();
    http::async_write(
        stream_, *response,
        [self = this->shared_from_this(), response](beast::error_code ec, std::size_t) {
          if (ec || !response->keep_alive()) {
            beast::error_code ignored;
            beast::get_lowest_layer(self->stream_)
                .socket()
                .shutdown(tcp::socket::shutdown_send, ignored);
            return;
          }
          self->read();
        });
  }

  // Who sent this request, for the audit log: the peer's address, and "admin.token" when the
  // request had to carry the token (the token names no one).
  AuditActor actor() {
    beast::error_code ec;
    auto peer = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
    std::string address;
    if (!ec) address = config::Endpoint{peer.address().to_string(), peer.port()}.text();
    return {"http", token_.empty() ? "" : "admin.token", std::move(address)};
  }

  void error(http::status status, std::string_view message) {
    answer(status, nlohmann::json{{"error", message}}.dump() + "\n");
  }

  void handle() {
    std::string target(request_.target());
    std::string query;
    if (auto at = target.find('?'); at != std::string::npos) {
      query = target.substr(at + 1);
      target.resize(at);
    }
    // The dashboard's own files hold nothing secret; the page asks for the token when the
    // API answers 401 and sends it with every request it makes.
    if (request_.method() == http::verb::get)
      if (const auto* asset = find_dashboard_asset(target))
        return answer(http::status::ok, std::string(asset->body), asset->content_type);
    // An orchestrator's probes carry no token: they get a status and a reason, nothing more.
    if (request_.method() == http::verb::get && (target == "/livez" || target == "/readyz")) {
      auto probed = [self = this->shared_from_this()](const ProbeAnswer& probe) {
        nlohmann::json body{{"status", probe.status}};
        if (!probe.ok) body["reason"] = probe.reason;
        self->answer(probe.ok ? http::status::ok : http::status::service_unavailable,
                     body.dump() + "\n");
      };
      if (target == "/livez") return probes_.live(std::move(probed));
      return probes_.ready(std::move(probed));
    }
    if (!token_.empty() && !bearer_matches(request_[http::field::authorization], token_))
      return error(http::status::unauthorized,
                   "send the admin token as 'Authorization: Bearer <token>' (admin.token)");
    auto self = this->shared_from_this();
    if (request_.method() == http::verb::post && target == "/reload") {
      return server_.reload(actor(), [self](ControlPlane::ReloadResult result) {
        self->answer(result.ok ? http::status::ok : http::status::unprocessable_entity,
                     nlohmann::json{{"ok", result.ok}, {"message", result.message}}.dump() + "\n");
      });
    }
    if (target == "/reshard" || target == "/reshard/approve" || target == "/reshard/abort")
      return reshard(target);
    if (request_.method() != http::verb::get)
      return error(http::status::method_not_allowed,
                   "only GET, and POST /reload, /reshard/approve, /reshard/abort");
    if (target == "/config") return config();
    if (target == "/routers") {
      auto view = server_.fleet_view();
      if (!view)
        return error(http::status::not_found,
                     "this router is not in a fleet (its config has no cluster:)");
      return answer(http::status::ok, routers_json(*view).dump(2) + "\n");
    }
    if (target == "/placement")
      return answer(http::status::ok, placement_json(*server_.topology()).dump() + "\n");
    if (target == "/hotkeys") return hot_keys(count_in(query, 100));
    if (target == "/analyze") return analyze(query);
    if (target == "/shards/info") return shard_info();
    if (target != "/stats" && target != "/metrics" && target != "/shards")
      return error(http::status::not_found,
                   "no such page; try / (the dashboard), /stats, /metrics, /shards, "
                   "/shards/info, /config, /placement, /hotkeys, /analyze, /reshard, /routers, "
                   "/livez, /readyz");
    take_snapshot(server_, [self, target](const ClusterSnapshot& snapshot) {
      if (target == "/metrics")
        return self->answer(http::status::ok, prometheus_text(snapshot),
                            "text/plain; version=0.0.4; charset=utf-8");
      if (target == "/shards")
        return self->answer(http::status::ok, shards_json(snapshot).dump(2) + "\n");
      self->answer(http::status::ok, stats_json(snapshot).dump(2) + "\n");
    });
  }

  // GET /reshard: the move's state (SANTRAL RESHARD STATUS and PLAN in one); POST
  // /reshard/approve and /reshard/abort act first.
  void reshard(const std::string& target) {
    using Verb = ControlPlane::ReshardVerb;
    bool post = request_.method() == http::verb::post;
    if (post == (target == "/reshard"))
      return error(http::status::method_not_allowed,
                   "GET /reshard; POST /reshard/approve or /reshard/abort");
    Verb verb = target == "/reshard/approve" ? Verb::Approve
                : target == "/reshard/abort" ? Verb::Abort
                                             : Verb::Status;
    server_.reshard(verb, actor(),
                    [self = this->shared_from_this()](const ControlPlane::ReshardAnswer& answer) {
                      auto body = to_json(answer.status);
                      if (!answer.error.empty()) body["error"] = answer.error;
                      self->answer(answer.error.empty() ? http::status::ok : http::status::conflict,
                                   body.dump(2) + "\n");
                    });
  }

  // GET /analyze?target=<namespace | glob>&seconds=10&sample=0.05&key=<field | regex>: SANTRAL
  // ANALYZE's report as JSON, with the config that applies its recommendation, once the
  // sampling window is over.
  void analyze(std::string_view query) {
    ControlPlane::AnalyzeRequest request;
    if (!valid_query(query))
      return error(http::status::bad_request,
                   "the query string is not valid: percent-encode characters such as ^ [ ] \\ "
                   "{ } | (encodeURIComponent, curl --data-urlencode with -G)");
    auto target = query_param(query, "target");
    auto seconds = number_param(query, "seconds", request.seconds, 0, 3600);
    auto rate = number_param(query, "sample", request.rate, 0, 1);
    if (!target || target->empty() || !seconds || !rate)
      return error(http::status::bad_request,
                   "use /analyze?target=<namespace or key glob>[&seconds=<n, up to 3600>]"
                   "[&sample=<rate in (0, 1]>][&key=<field or regex>]");
    request.target.target = *target;
    request.target.candidate = query_param(query, "key").value_or("");
    request.seconds = *seconds;
    request.rate = *rate;
    server_.analyze(std::move(request), [self = this->shared_from_this()](
                                            const ControlPlane::AnalyzeAnswer& answer) {
      if (!answer.error.empty()) return self->error(http::status::conflict, answer.error);
      auto body = nlohmann::json::parse(report_json(answer.report));
      body["config_text"] = answer.config_text;
      self->answer(http::status::ok,
                   body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    });
  }

  // The effective config, and how the last reload went.
  void config() {
    nlohmann::json out = config_json(*server_.topology());
    out["last_reload"] = nullptr;
    if (const auto& last = server_.last_reload())
      out["last_reload"] = {
          {"ok", last->result.ok},
          {"message", last->result.message},
          {"trigger", last->trigger},
          {"unix_time", std::chrono::duration<double>(last->at.time_since_epoch()).count()}};
    answer(http::status::ok, out.dump(2) + "\n");
  }

  // The hottest keys all workers see and every salted counter, as SANTRAL HOTKEYS COUNT 100
  // lists them; a salted counter also with its sub-keys and their shards.
  void hot_keys(std::size_t count) {
    list_hot_keys(
        server_.worker_services(), server_.io(), count,
        [self = this->shared_from_this()](auto rates) {
          auto topology = self->server_.topology();
          const auto& map = *topology->map;
          nlohmann::json keys = nlohmann::json::array();
          for (const HotKeyRate& rate : rates) {
            nlohmann::json sub_keys = nlohmann::json::array();
            if (rate.salts > 0) {
              // The layout is the map's to decide, the same on every worker.
              auto counter = lay_out_counter(rate.key, rate.salts, config::SaltReply::Estimate,
                                             topology->naming_map());
              for (const auto& sub_key : counter.sub_keys)
                sub_keys.push_back(
                    {{"key", sub_key}, {"shard", map.shard(map.shard_for_key(sub_key)).name}});
            }
            keys.push_back({{"key", rate.key},
                            {"ops_per_sec", rate.ops},
                            {"reads_per_sec", rate.reads},
                            {"writes_per_sec", rate.writes},
                            {"shard", rate.shard},
                            {"salted", rate.salts},
                            {"cached", rate.cached},
                            {"salted_by", rate.salts > 0 ? salted_by_name(rate.salted_by) : ""},
                            {"sub_keys", sub_keys}});
          }
          self->answer(http::status::ok, nlohmann::json{{"hotkeys", keys}}.dump(2) + "\n");
        });
  }

  // Each shard's keys and memory, from its primary's INFO.
  void shard_info() {
    take_shard_info(
        server_, [self = this->shared_from_this()](const std::vector<ShardInfo>& infos) {
          nlohmann::json shards = nlohmann::json::array();
          for (const auto& info : infos)
            shards.push_back({{"name", info.name},
                              {"address", info.address},
                              {"answered", info.answered},
                              {"error", info.error},
                              {"keys", info.keys},
                              {"expires", info.expires},
                              {"used_memory", info.used_memory},
                              {"maxmemory", info.maxmemory}});
          self->answer(http::status::ok, nlohmann::json{{"shards", shards}}.dump(2) + "\n");
        });
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  Request request_;
  ControlPlane& server_;
  HealthProbes& probes_;
  const std::string& token_;
};

}  // namespace

AdminServer::AdminServer(asio::io_context& io, ControlPlane& server)
    : io_(io), server_(server), probes_(server), acceptor_(io) {}

AdminServer::~AdminServer() = default;

std::string AdminServer::listen(const config::Admin& admin) {
  token_ = admin.token;
  tls_ = admin.tls;
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(admin.listen.host, std::to_string(admin.listen.port), ec);
  if (ec || endpoints.empty()) return "cannot resolve " + admin.listen.text() + ": " + ec.message();
  tcp::endpoint endpoint = *endpoints.begin();
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return ec.message();
  accept();
  return {};
}

void AdminServer::close() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

void AdminServer::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) return accept();
    if (!tls_) {
      std::make_shared<AdminSession<beast::tcp_stream>>(server_, probes_, token_, std::move(socket))
          ->start();
    } else if (auto contexts = tls_in_force(); contexts && contexts->clients) {
      // The certificates in force now: a reload's renewed files serve the next connection.
      std::make_shared<AdminSession<beast::ssl_stream<beast::tcp_stream>>>(
          server_, probes_, token_, std::move(socket), *contexts->clients)
          ->start();
    }
    accept();
  });
}

}  // namespace santral::router
