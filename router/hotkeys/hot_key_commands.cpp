#include "router/hotkeys/hot_key_commands.h"

#include <strings.h>
#include <algorithm>
#include <charconv>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/client_session.h"
#include "router/hotkeys/hot_key_report.h"
#include "router/hotkeys/salt_fence.h"
#include "router/hotkeys/salt_table.h"
#include "router/hotkeys/unsalt_fold.h"
#include "router/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool to_count(std::string_view text, long long& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

// Replaces the run-time salting of `key` (nullopt: not salted) and tells every worker; this
// worker takes it at once, so the client's next command already sees it.
void change_salting(Worker& worker, std::string_view key,
                    std::optional<SaltOverrides::Salting> salting) {
  auto& shared = worker.shared();
  {
    std::lock_guard lock(shared.salt_lock);
    auto next = shared.salt_overrides ? std::make_shared<SaltOverrides>(*shared.salt_overrides)
                                      : std::make_shared<SaltOverrides>();
    next->by_key[std::string(key)] = salting;
    shared.salt_overrides = std::move(next);
    ++shared.salt_version;
  }
  worker.refresh_salts();
  for (Worker* peer : worker.peers())
    if (peer != &worker) boost::asio::post(peer->io(), [peer] { peer->refresh_salts(); });
}

std::string rate_text(double rate) {
  return fmt::format("{:.1f}", rate);
}

}  // namespace

void santral_hotkeys(const Routed& routed) {
  auto& session = routed.session;
  const auto& args = routed.request.args;
  long long count = 10;
  if (args.size() == 4 && equals_nocase(args[2], "COUNT")) {
    if (!to_count(args[3], count) || count < 1)
      return session.reply_error(error_message(ClientError::HotKeysSyntax));
  } else if (args.size() != 2) {
    return session.reply_error(error_message(ClientError::HotKeysSyntax));
  }
  auto slot = session.open_slot();
  boost::intrusive_ptr<ClientSession> keep(&session);
  int protocol = session.state().protocol;
  collect_hot_keys(session.worker().peers(), session.worker().io(),
                   [keep, slot, count, protocol](std::vector<HotKeyRate> rates) {
                     if (rates.size() > static_cast<std::size_t>(count))
                       rates.resize(static_cast<std::size_t>(count));
                     std::string out;
                     protocol::RespWriter writer(out, protocol);
                     writer.array_header(rates.size());
                     for (const auto& rate : rates) {
                       writer.map_header(7);
                       writer.bulk("key");
                       writer.bulk(rate.key);
                       writer.bulk("ops_per_sec");
                       writer.bulk(rate_text(rate.ops));
                       writer.bulk("reads_per_sec");
                       writer.bulk(rate_text(rate.reads));
                       writer.bulk("writes_per_sec");
                       writer.bulk(rate_text(rate.writes));
                       writer.bulk("shard");
                       writer.bulk(rate.shard);
                       writer.bulk("salted");
                       writer.integer(rate.salts);
                       writer.bulk("cached");
                       writer.integer(rate.cached ? 1 : 0);
                     }
                     keep->deliver(slot, 0, out);
                   });
}

void santral_salt(const Routed& routed) {
  auto& session = routed.session;
  const auto& args = routed.request.args;
  std::string_view key = args[2];
  long long salts = 0;
  if (!to_count(args[3], salts) || salts < config::kMinSalts || salts > config::kMaxSalts)
    return session.reply_error(
        error_message(ClientError::SaltCount, config::kMinSalts, config::kMaxSalts));
  auto reply = config::SaltReply::Estimate;
  if (args.size() == 6 && equals_nocase(args[4], "REPLY") && equals_nocase(args[5], "exact"))
    reply = config::SaltReply::Exact;
  else if (args.size() != 4 && !(args.size() == 6 && equals_nocase(args[4], "REPLY") &&
                                 equals_nocase(args[5], "estimate")))
    return session.reply_error(error_message(ClientError::SaltSyntax));
  auto& worker = session.worker();
  if (const SaltedCounter* counter = worker.salts().find(key))
    return session.reply_error(error_message(ClientError::AlreadySalted, key, counter->salts));
  change_salting(worker, key, SaltOverrides::Salting{static_cast<std::uint32_t>(salts), reply});
  const SaltedCounter* counter = worker.salts().find(key);
  std::string shards;
  for (std::size_t shard : counter->shards)
    shards += (shards.empty() ? "" : ", ") + worker.shard_map().shard(shard).name;
  spdlog::info(
      "SANTRAL SALT: '{}' is a salted counter over {} sub-keys on shards {} (reply {}), "
      "by client {} ({})",
      key, salts, shards, config::salt_reply_name(reply), session.state().id, session.state().peer);
  session.reply("+OK\r\n");
}

void santral_unsalt(const Routed& routed) {
  auto& session = routed.session;
  std::string_view key = routed.request.args[2];
  auto& worker = session.worker();
  const SaltedCounter* current = worker.salts().find(key);
  if (current == nullptr) return session.reply_error(error_message(ClientError::NotSalted, key));
  SaltedCounter counter = *current;
  change_salting(worker, key, std::nullopt);
  spdlog::info(
      "SANTRAL UNSALT: '{}' is no longer salted, by client {} ({}); folding its {} "
      "sub-keys back into it",
      key, session.state().id, session.state().peer, counter.salts);
  auto slot = session.open_slot();
  boost::intrusive_ptr<ClientSession> keep(&session);
  std::vector<std::size_t> shards = counter.shards;
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  fence_salting(worker, shards, [keep, slot, counter = std::move(counter)]() mutable {
    fold_sub_keys(keep, slot, std::move(counter));
  });
}

}  // namespace santral::router
