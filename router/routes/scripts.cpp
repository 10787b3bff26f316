#include "router/routes/scripts.h"

#include <string>
#include <vector>

#include "protocol/request_parser.h"
#include "protocol/resp_writer.h"
#include "router/routes/script_cache.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

// Stands between the shard and the client for one EVALSHA: passes the reply on, unless it is
// NOSCRIPT, in which case the same call goes to the same shard once more as EVAL.
class NoScriptRetry final : public ReplySink {
 public:
  NoScriptRetry(boost::intrusive_ptr<RequestContext> client, std::uint64_t slot,
                BackendConnectionPtr connection, std::string request, std::string sha)
      : session_(std::move(client)),
        slot_(slot),
        connection_(std::move(connection)),
        request_(std::move(request)),
        sha_(std::move(sha)) {}

  void deliver(std::uint64_t, std::uint32_t fragment, std::string_view reply) override {
    std::string eval;
    if (reply.starts_with("-NOSCRIPT") && as_eval(eval)) {
      connection_->script_lost(sha_);
      connection_->send_within(eval, session_, slot_, fragment,
                               session_->worker().config().timeouts.script);
      return;
    }
    session_->deliver(slot_, fragment, reply);
  }

 private:
  // The EVALSHA request with EVAL (or EVAL_RO) and the script's body in place of its SHA1.
  bool as_eval(std::string& out) const {
    protocol::RequestParser parser;
    protocol::Request request;
    std::size_t consumed = 0;
    if (parser.parse(request_, request, consumed) != protocol::ParseStatus::Complete) return false;
    const std::string* body = session_->worker().scripts().body_of(request.args[1]);
    if (body == nullptr) return false;
    std::vector<std::string_view> args(request.args.begin(), request.args.end());
    bool read_only = args[0].size() == 10;  // EVALSHA_RO
    args[0] = read_only ? "EVAL_RO" : "EVAL";
    args[1] = *body;
    protocol::RespWriter(out).command(args);
    return true;
  }

  boost::intrusive_ptr<RequestContext> session_;
  std::uint64_t slot_;
  BackendConnectionPtr connection_;
  std::string request_;  // the EVALSHA as the client sent it (multibulk)
  std::string sha_;
};

}  // namespace

bool forward_evalsha(const Routed& routed, std::size_t shard) {
  auto& client = routed.client;
  const std::string* body = client.worker().scripts().body_of(routed.request.args[1]);
  if (body == nullptr) return false;
  std::string sha = ScriptCache::sha1_hex(*body);
  BackendConnection& connection = client.backend(shard);
  if (!connection.has_script(sha)) {
    std::string load;
    std::string_view args[] = {"SCRIPT", "LOAD", *body};
    protocol::RespWriter(load).command(args);
    connection.send_silent(load);
    connection.script_loaded(sha);
  }
  auto slot = client.open_slot();
  std::string_view bytes = request_bytes(routed);
  boost::intrusive_ptr<ReplySink> sink(
      new NoScriptRetry(boost::intrusive_ptr<RequestContext>(&client), slot,
                        BackendConnectionPtr(&connection), std::string(bytes), std::move(sha)));
  client.send_current(connection, bytes, std::move(sink), slot, 0);
  return true;
}

}  // namespace santral::router
