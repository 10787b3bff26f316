#include "router/resharding/marked_migrate.h"

#include <algorithm>
#include <random>

#include <boost/asio/steady_timer.hpp>

#include "protocol/reply_scanner.h"
#include "router/backend/draining_connections.h"
#include "router/resharding/key_conflict.h"
#include "router/resharding/migrate.h"
#include "router/resharding/receiving_mark.h"

namespace santral::router {

MigrateSend plan_migrate(const config::Config& config, const config::Endpoint& to, int database,
                         std::span<const std::string_view> keys, BackendConnection& source,
                         BackendConnection& target, std::function<bool()> still_wanted) {
  MigrateSend send;
  send.source = &source;
  send.target = &target;
  send.keys.assign(keys.begin(), keys.end());
  send.deadline = std::chrono::steady_clock::now() + config.resharding.hold_timeout;
  send.limit = migrate_answer_timeout(config);
  send.still_wanted = std::move(still_wanted);
  if (!config.cluster.enabled()) {
    send.bytes = migrate_command(config, to, database, keys);
    return send;
  }
  send.marked = true;
  send.bytes = migrate_unless_receiving(config, to, database, keys);
  auto holder = receiving_mark_holder();
  send.mark = mark_receiving(holder, config.resharding.migrate_timeout, database);
  send.unmark = unmark_receiving(holder, database);
  return send;
}

namespace {

// Conflicts settled in a row before the MIGRATE's BUSYKEY is taken as its answer.
constexpr int kMostSettles = 3;

class MarkedMigrate final : public ReplySink {
 public:
  MarkedMigrate(boost::asio::io_context& io, MigrateSend send, ReplySinkPtr sink,
                std::uint64_t slot, std::uint32_t fragment)
      : send_(std::move(send)),
        sink_(std::move(sink)),
        slot_(slot),
        fragment_(fragment),
        retry_(io) {}

  void start() {
    if (!send_.marked) return migrate();
    send_.target->send(send_.mark, ReplySinkPtr(this), 0, kMark);
  }

  void deliver(std::uint64_t, std::uint32_t fragment, std::string_view reply) override {
    if (fragment == kUnmark) return;  // a mark taken back: nothing waits for it
    if (fragment == kMark) {
      if (!reply.starts_with(":")) return finish(reply, false);
      holds_mark_ = true;
      return migrate();
    }
    if (busy_key(reply) && settles_ < kMostSettles) return settle();
    if (refused_as_receiving(reply) && std::chrono::steady_clock::now() < send_.deadline) {
      unmark();
      return again();
    }
    finish(reply, true);
  }

 private:
  static constexpr std::uint32_t kMark = 1, kUnmark = 2, kMigrate = 3;

  void migrate() {
    if (send_.still_wanted && !send_.still_wanted()) return finish("+NOKEY\r\n", false);
    send_.source->send_within(send_.bytes, ReplySinkPtr(this), 0, kMigrate, send_.limit);
  }

  // BUSYKEY: the copies compared and settled, then the MIGRATE sent again.
  void settle() {
    ++settles_;
    settle_busy_keys(*send_.source, *send_.target, send_.keys,
                     [self = boost::intrusive_ptr<MarkedMigrate>(this)](const std::string& error) {
                       if (!error.empty())
                         return self->finish(
                             "-ERR santral: a key exists on both shards and "
                             "could not be compared: " +
                                 error + "\r\n",
                             true);
                       self->migrate();
                     });
  }

  void again() {
    static thread_local std::minstd_rand random{std::random_device{}()};
    int ceiling = std::min(50, 2 << std::min(attempts_++, 5));
    retry_.expires_after(std::chrono::milliseconds(1 + random() % ceiling));
    retry_.async_wait(
        [self = boost::intrusive_ptr<MarkedMigrate>(this)](boost::system::error_code ec) {
          if (!ec) self->start();
        });
  }

  void unmark() {
    if (std::exchange(holds_mark_, false))
      send_.target->send(send_.unmark, ReplySinkPtr(this), 0, kUnmark);
  }

  // The answer goes to the caller now. The MIGRATE is over once its source answered it; if
  // Santral gave up on it instead (`sent` and not answered by the shard: an error), once the
  // source proves it done or dead. Until then its target stays marked and its claim held.
  void finish(std::string_view reply, bool sent) {
    if (sink_) std::exchange(sink_, nullptr)->deliver(slot_, fragment_, reply);
    if (!sent || !protocol::is_error_frame(reply)) return over();
    DrainingConnections::of(send_.source->io())
        .after(send_.source->target().address.text(),
               [self = boost::intrusive_ptr<MarkedMigrate>(this)] { self->over(); });
  }

  void over() {
    unmark();
    if (send_.settled) std::exchange(send_.settled, nullptr)();
  }

  MigrateSend send_;
  ReplySinkPtr sink_;
  std::uint64_t slot_;
  std::uint32_t fragment_;
  int attempts_ = 0;
  int settles_ = 0;
  bool holds_mark_ = false;  // its target is marked as receiving (a fleet's)
  boost::asio::steady_timer retry_;
};

}  // namespace

void send_migrate(boost::asio::io_context& io, MigrateSend send, ReplySinkPtr sink,
                  std::uint64_t slot, std::uint32_t fragment) {
  boost::intrusive_ptr<MarkedMigrate>(
      new MarkedMigrate(io, std::move(send), std::move(sink), slot, fragment))
      ->start();
}

}  // namespace santral::router
