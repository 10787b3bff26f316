#include "router/routes/transaction.h"

#include <fmt/format.h>

#include "protocol/errors.h"
#include "router/merge/merge_brief.h"
#include "router/routes/lent_replies.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;
using protocol::StatefulVerb;

namespace {

constexpr std::string_view kMulti = "*1\r\n$5\r\nMULTI\r\n";
constexpr std::string_view kDiscard = "*1\r\n$7\r\nDISCARD\r\n";

}  // namespace

void route_transaction(const Routed& routed) {
  auto& transaction = routed.client.held().transaction();
  switch (routed.spec.verb) {
    case StatefulVerb::Multi:
      return transaction.multi(routed);
    case StatefulVerb::Exec:
      return transaction.exec(routed);
    case StatefulVerb::Discard:
      return transaction.discard(routed);
    case StatefulVerb::Watch:
      return transaction.watch(routed);
    default:  // StatefulVerb::Unwatch
      break;
  }
  // UNWATCH inside MULTI is queued like any command, as in Redis.
  if (transaction.in_multi()) return transaction.queue(routed);
  transaction.unwatch(routed);
}

void route_queued(const Routed& routed) {
  routed.client.held().transaction().queue(routed);
}

bool Transaction::pin(RequestContext& client, std::size_t shard) {
  const std::string& name = client.worker().shard_map().shard(shard).name;
  if (connection_) return name == shard_name_;
  shard_name_ = name;
  connection_ = client.worker().pool().lend(shard, client.profile());
  return true;
}

void Transaction::give_back(RequestContext& client) {
  if (connection_) client.worker().pool().give_back(std::move(connection_));
  connection_.reset();
}

void Transaction::abandon(RequestContext& client) {
  if (connection_) client.worker().pool().drop(connection_);
  connection_.reset();
  watch_lost_ = false;
  reset();
}

void Transaction::map_changed(RequestContext& client) {
  if (!connection_) return;
  client.worker().pool().drop(connection_);
  connection_.reset();
  if (in_multi_ && queued_ > 0) failed_ = true;
  multi_sent_ = false;
  watch_lost_ = !in_multi_ || queued_ == 0;
}

void Transaction::reset() {
  in_multi_ = failed_ = multi_sent_ = scripted_ = everywhere_ = false;
  queued_ = 0;
  deferred_.clear();
}

void Transaction::watch(const Routed& routed) {
  auto& client = routed.client;
  if (in_multi_) return client.reply_error(error_message(ClientError::WatchInMulti));
  if (routed.plan.has_error()) return client.reply_error(routed.plan.error);
  std::size_t shard = *routed.plan.shard;
  if (!pin(client, shard)) {
    const auto& map = client.worker().shard_map();
    return client.reply_error(error_message(ClientError::TransactionCrossShard,
                                            connection_->target().shard_name,
                                            routed.request.args[1], map.shard(shard).name));
  }
  auto slot = client.open_slot();
  connection_->send(request_bytes(routed), &client, slot, 0);
}

void Transaction::unwatch(const Routed& routed) {
  auto& client = routed.client;
  watch_lost_ = false;
  if (!connection_) return client.reply("+OK\r\n");
  auto slot = client.open_slot();
  connection_->send(request_bytes(routed), &client, slot, 0);
  give_back(client);  // clean once UNWATCH has run
}

void Transaction::multi(const Routed& routed) {
  auto& client = routed.client;
  if (in_multi_) return client.reply_error(error_message(ClientError::MultiNested));
  reset();
  in_multi_ = true;
  if (!connection_) return client.reply("+OK\r\n");
  multi_sent_ = true;
  auto slot = client.open_slot();
  connection_->send(kMulti, &client, slot, 0);
}

void Transaction::refuse(RequestContext& client, std::string_view message) {
  failed_ = true;
  client.reply_error(message);
}

void Transaction::refuse_exec(RequestContext& client, std::string_view message) {
  abandon(client);
  client.reply_error(error_message(ClientError::ExecRefused, message));
}

// The plan says where a queued command runs: its keys' shard, any shard (the transaction's,
// once it has one), or nowhere, with the reason.
void Transaction::queue(const Routed& routed) {
  auto& client = routed.client;
  const auto& plan = routed.plan;
  if (plan.has_error()) return refuse(client, plan.error);
  scripted_ = scripted_ || protocol::runs_script(routed.spec);
  if (plan.every_shard) {
    if (connection_)
      return refuse(client, error_message(ClientError::NotInTransaction, upper_name(routed.spec),
                                          fmt::format("it runs on every shard, and this "
                                                      "transaction already runs on shard '{}'",
                                                      connection_->target().shard_name)));
    everywhere_ = true;
  }
  if (plan.any_shard || plan.every_shard) {
    if (connection_) return send_queued(routed);
    // No key has chosen the shard yet (MULTI, PING, SET k ...): it waits for the first key,
    // answered QUEUED as the shard would, and goes first once the shard is chosen.
    deferred_.emplace_back(request_bytes(routed));
    ++queued_;
    return client.reply("+QUEUED\r\n");
  }
  if (everywhere_)
    return refuse(client, error_message(ClientError::NotInTransaction, upper_name(routed.spec),
                                        "this transaction holds a command that runs on every "
                                        "shard (FLUSHDB, FLUSHALL...), so it cannot name keys"));
  std::size_t shard = *plan.shard;
  if (!pin(client, shard)) {
    const auto& map = client.worker().shard_map();
    std::string what =
        plan.keys.empty()
            ? upper_name(routed.spec)
            : std::string(routed.request.args[plan.keys.front().position].substr(0, 64));
    return refuse(
        client, error_message(ClientError::TransactionCrossShard, connection_->target().shard_name,
                              what, map.shard(shard).name));
  }
  send_queued(routed);
}

void Transaction::send_deferred() {
  if (!multi_sent_) {
    connection_->send_silent(kMulti);
    multi_sent_ = true;
  }
  for (const auto& bytes : deferred_) connection_->send_silent(bytes);
  deferred_.clear();
}

void Transaction::send_queued(const Routed& routed) {
  send_deferred();
  ++queued_;
  auto slot = routed.client.open_slot();
  connection_->send(request_bytes(routed), &routed.client, slot, 0);
}

void Transaction::exec(const Routed& routed) {
  auto& client = routed.client;
  if (!in_multi_) return client.reply_error(error_message(ClientError::ExecWithoutMulti));
  if (failed_) {
    if (multi_sent_ && connection_) connection_->send_silent(kDiscard);
    client.reply_error(error_message(ClientError::ExecAbort));
  } else if (std::exchange(watch_lost_, false)) {
    if (multi_sent_ && connection_) connection_->send_silent(kDiscard);
    client.reply(client.state().protocol == 3 ? "_\r\n" : "*-1\r\n");
  } else if (everywhere_) {
    exec_everywhere(routed);
  } else if (!connection_ && deferred_.empty()) {
    client.reply("*0\r\n");  // nothing was queued
  } else {
    if (!connection_) {  // only keyless commands: any shard runs them
      pin(client, any_shard(client));
      send_deferred();
    }
    auto slot = client.open_slot();
    if (scripted_) {
      connection_->send_within(request_bytes(routed), &client, slot, 0,
                               client.worker().config().timeouts.script);
    } else {
      connection_->send(request_bytes(routed), &client, slot, 0);
    }
    ended_in_flight_ = true;
  }
  give_back(client);  // EXEC and DISCARD leave the connection clean (no MULTI, no WATCH)
  reset();
}

// MULTI, the queued commands and EXEC on every shard, each over a connection lent for it.
void Transaction::exec_everywhere(const Routed& routed) {
  auto& client = routed.client;
  const auto& map = client.worker().shard_map();
  std::size_t shards = map.shard_count();
  MergeBrief brief;
  brief.kind = protocol::Merge::Same;
  brief.command = "EXEC";
  brief.protocol = client.state().protocol;
  for (std::size_t s = 0; s < shards; ++s) brief.fragment_names.push_back(map.shard(s).name);
  auto slot = client.open_slot(static_cast<std::uint32_t>(shards), make_merge(std::move(brief)));
  boost::intrusive_ptr<LentReplies> replies(new LentReplies(client, slot, shards));
  for (std::uint32_t f = 0; f < shards; ++f) {
    auto connection = client.worker().pool().lend(f, client.profile());
    replies->lent(connection);
    connection->send_silent(kMulti);
    for (const auto& bytes : deferred_) connection->send_silent(bytes);
    if (scripted_) {
      connection->send_within(request_bytes(routed), replies, slot, f,
                              client.worker().config().timeouts.script);
    } else {
      connection->send(request_bytes(routed), replies, slot, f);
    }
  }
  ended_in_flight_ = true;
}

void Transaction::discard(const Routed& routed) {
  auto& client = routed.client;
  if (!in_multi_) return client.reply_error(error_message(ClientError::DiscardWithoutMulti));
  if (connection_ && multi_sent_) {
    auto slot = client.open_slot();
    connection_->send(request_bytes(routed), &client, slot, 0);
    ended_in_flight_ = true;
  } else {
    if (connection_) connection_->send_silent("*1\r\n$7\r\nUNWATCH\r\n");
    client.reply("+OK\r\n");
  }
  watch_lost_ = false;
  give_back(client);
  reset();
}

}  // namespace santral::router
