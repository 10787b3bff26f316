#include "router/resharding/marked_migrate.h"

#include <algorithm>
#include <random>

#include <boost/asio/steady_timer.hpp>

#include "router/resharding/migrate.h"
#include "router/resharding/receiving_mark.h"

namespace santral::router {

MigrateSend plan_migrate(const config::Config& config, const config::Endpoint& to, int database,
                         std::span<const std::string_view> keys, BackendConnection& source,
                         BackendConnection& target, std::function<bool()> still_wanted) {
  MigrateSend send;
  send.source = &source;
  send.deadline = std::chrono::steady_clock::now() + config.resharding.hold_timeout;
  send.still_wanted = std::move(still_wanted);
  if (!config.cluster.enabled()) {
    send.bytes = migrate_command(config, to, database, keys);
    return send;
  }
  send.target = &target;
  send.bytes = migrate_unless_receiving(config, to, database, keys);
  auto holder = receiving_mark_holder();
  send.mark = mark_receiving(holder, config.resharding.migrate_timeout, database);
  send.unmark = unmark_receiving(holder, database);
  return send;
}

namespace {

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
    if (!send_.target) return migrate();
    send_.target->send(send_.mark, ReplySinkPtr(this), 0, kMark);
  }

  void deliver(std::uint64_t, std::uint32_t fragment, std::string_view reply) override {
    if (fragment == kUnmark) return;  // a mark taken back: nothing waits for it
    if (fragment == kMark) {
      if (!reply.starts_with(":")) return answer(reply);
      return migrate();
    }
    if (send_.target) send_.target->send(send_.unmark, ReplySinkPtr(this), 0, kUnmark);
    if (refused_as_receiving(reply) && std::chrono::steady_clock::now() < send_.deadline)
      return again();
    answer(reply);
  }

 private:
  static constexpr std::uint32_t kMark = 1, kUnmark = 2, kMigrate = 3;

  void migrate() {
    if (send_.still_wanted && !send_.still_wanted()) {
      if (send_.target) send_.target->send(send_.unmark, ReplySinkPtr(this), 0, kUnmark);
      return answer("+NOKEY\r\n");
    }
    send_.source->send(send_.bytes, ReplySinkPtr(this), 0, kMigrate);
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

  void answer(std::string_view reply) {
    if (sink_) std::exchange(sink_, nullptr)->deliver(slot_, fragment_, reply);
  }

  MigrateSend send_;
  ReplySinkPtr sink_;
  std::uint64_t slot_;
  std::uint32_t fragment_;
  int attempts_ = 0;
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
